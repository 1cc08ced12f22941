/**
 * One contract suite for every endpoint client (the DecidesItems port): the SageMaker runtime
 * client, plain HTTP, batching, and the endpoint in process, each against the real endpoint on
 * the tiny model, as Hono runs one router suite against every router. Each client must give the
 * same logits as the reference for the same item, keyed by option id in the policy's order
 * (never realigned by position), for every question type, and refuse an item the endpoint
 * refuses with a 422 that is never retried.
 */
import { describe, expect, it } from "vitest";
import type { DecidesItems, EndpointDecision } from "../../shared/domain/decision-endpoint.ts";
import { EndpointRejectedError } from "../../shared/domain/errors.ts";
import type { Item } from "../../shared/domain/item.ts";
import { type Policy, parsePolicy } from "../../shared/domain/policy/policy.ts";

const option = (id: string, description: string) => ({ id, description, automate: true });
const policyOf = (fields: Record<string, unknown>): Policy =>
  parsePolicy({
    id: "contract",
    version: 1,
    question: "Which team?",
    type: "choice",
    autoThreshold: 0.8,
    ...fields,
  });

/** The policies the suite decides under, one per question type and option order. */
export const CONTRACT_POLICIES = {
  choice: policyOf({
    // Integer-like ids: a plain JSON object writes "10" before "billing", so only keying by id keeps them apart.
    options: [option("billing", "Billing"), option("10", "Technical"), option("account", "Account")],
  }),
  score: policyOf({
    type: "score",
    question: "How urgent is it?",
    options: [option("low", "Not urgent"), option("mid", "Urgent"), option("high", "Critical")],
  }),
  noul: policyOf({
    type: "noul",
    question: "Does the customer ask for a refund?",
    options: [option("false", "No refund"), option("true", "A refund")],
  }),
  cyclic: policyOf({
    optionOrder: "cyclic",
    options: [option("billing", "Billing"), option("technical", "Technical"), option("account", "Account")],
  }),
  cyclicReordered: policyOf({
    optionOrder: "cyclic",
    options: [option("account", "Account"), option("billing", "Billing"), option("technical", "Technical")],
  }),
} as const;

const item = (state: Item["state"], id = "C-1"): Item => ({ id, policy: "contract", state });
const STATE = { subject: "Charged twice", body: "My card was charged twice; please refund me." };

function expectClose(actual: readonly number[], expected: readonly number[]): void {
  expect(actual).toHaveLength(expected.length);
  for (const [i, value] of actual.entries()) expect(Math.abs(value - expected[i]!)).toBeLessThan(1e-9);
}

/** Runs the contract on the client `make()` returns, comparing with the client `reference()` returns. */
export function decisionEndpointContract(
  name: string,
  make: () => DecidesItems,
  reference: () => DecidesItems,
): void {
  describe(`decision endpoint contract: ${name}`, () => {
    const decideBoth = async (policy: Policy): Promise<[EndpointDecision, EndpointDecision]> => [
      await make().decide(item(STATE), policy),
      await reference().decide(item(STATE), policy),
    ];

    it("answers a choice item with one finite logit per option, in the policy's order, and its provenance", async () => {
      const [decision, expected] = await decideBoth(CONTRACT_POLICIES.choice);
      expect(decision.logits).toHaveLength(3);
      expect(decision.logits.every(Number.isFinite)).toBe(true);
      expectClose(decision.logits, expected.logits);
      expect(decision.modelSha256).toMatch(/^[0-9a-f]{64}$/);
      expect(decision.modelSha256).toBe(expected.modelSha256);
      expect(decision.promptSha256).toBe(expected.promptSha256);
      expect(decision.promptVersion).toBe("direct-options/policy-first@1");
      expect(decision.optionOrder).toBe("declared");
      // The pipeline asks for the token mass: a share of the vocabulary, above 0 and at most 1.
      expect(decision.allowedTokenMass).toBeGreaterThan(0);
      expect(decision.allowedTokenMass).toBeLessThanOrEqual(1);
      expect(decision.latencyMs).toBeGreaterThan(0);
    });

    it("reads the letters alone for a policy that asks no mass: the same distribution, no mass", async () => {
      const lettersOnly = policyOf({ ...CONTRACT_POLICIES.choice, tokenMass: false });
      const [decision, expected] = await decideBoth(lettersOnly);
      expect(decision.allowedTokenMass).toBeNull();
      expectClose(decision.logits, expected.logits);
      // Renormalized over the letters, the same distribution as the full-vocabulary readout.
      const [withMass] = await decideBoth(CONTRACT_POLICIES.choice);
      const softmax = (logits: readonly number[]) => {
        const top = Math.max(...logits);
        const e = logits.map((l) => Math.exp(l - top));
        const sum = e.reduce((a, b) => a + b, 0);
        return e.map((x) => x / sum);
      };
      const [p, q] = [softmax(decision.logits), softmax(withMass.logits)];
      for (const [i, value] of p.entries()) expect(Math.abs(value - q[i]!)).toBeLessThan(1e-5);
    });

    it("answers score levels and noul options as the reference does", async () => {
      for (const policy of [CONTRACT_POLICIES.score, CONTRACT_POLICIES.noul]) {
        const [decision, expected] = await decideBoth(policy);
        expect(decision.logits).toHaveLength(policy.options.length);
        expectClose(decision.logits, expected.logits);
      }
    });

    it("keys the answer by option id: the cyclic order gives each option the same logit in any declared order", async () => {
      const first = await make().decide(item(STATE), CONTRACT_POLICIES.cyclic);
      const second = await make().decide(item(STATE), CONTRACT_POLICIES.cyclicReordered);
      expect(first.optionOrder).toBe("cyclic");
      const byId = (policy: Policy, decision: EndpointDecision) =>
        Object.fromEntries(policy.options.map((o, i) => [o.id, decision.logits[i]!]));
      const a = byId(CONTRACT_POLICIES.cyclic, first);
      const b = byId(CONTRACT_POLICIES.cyclicReordered, second);
      for (const id of ["billing", "technical", "account"])
        expect(Math.abs(a[id]! - b[id]!)).toBeLessThan(1e-9);
    });

    it("refuses an item the endpoint refuses with 422, once, naming System One's parameter", async () => {
      const error = await make()
        .decide(item("word ".repeat(20_000), "C-LONG"), CONTRACT_POLICIES.choice)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EndpointRejectedError);
      expect((error as EndpointRejectedError).status).toBe(422);
      expect((error as Error).message).toMatch(/questions\.decision/);
    });
  });
}
