/**
 * A cascade on the decide path, without servers: the policy's later tiers are asked only when
 * the tier before passes the item on (below its threshold, an option never automated, out of
 * scope, off-options mass), each tier's answer is read under its own calibration and threshold
 * and kept on the record, and "Decision Made" names the tier whose answer the record holds.
 * What a tier is sure of ends there: an audit draw or a missing certificate goes to people.
 */
import { beforeEach, describe, expect, it } from "vitest";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import { passesOn, tierPolicy, tierReading, tiersOf } from "../../shared/domain/cascade.ts";
import { systemOneRequest } from "../../shared/domain/contracts/system-one/index.ts";
import type { DecidesItems, EndpointDecision } from "../../shared/domain/decision-endpoint.ts";
import { EndpointUnavailableError } from "../../shared/domain/errors.ts";
import { DetailType, type PipelineEvent } from "../../shared/domain/events.ts";
import type { Item } from "../../shared/domain/item.ts";
import { type Policy, parsePolicy } from "../../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { reasonText } from "../../shared/pages/review-views.ts";
import { tierAnswers } from "../../shared/pages/tier-answers.ts";
import { type DecideDependencies, decideMessage } from "../../shared/use-cases/decide-message.ts";
import { cascadeTicketsPolicy } from "../helpers/policies.ts";

const CASCADE = cascadeTicketsPolicy({
  autoThreshold: 0.8,
  cascade: [{ model: "large", autoThreshold: 0.7, temperature: 2 }],
});

/** An endpoint whose answer depends on the model asked; it remembers each request's model. */
class ModelsEndpoint implements DecidesItems {
  readonly asked: (string | undefined)[] = [];
  constructor(private readonly logits: Record<string, number[] | Error>) {}
  async decide(item: Item, policy: Policy): Promise<EndpointDecision> {
    const request = systemOneRequest(item, policy);
    this.asked.push(request.model);
    const logits = this.logits[request.model ?? "default"];
    if (!logits) throw new Error(`no model ${request.model}`);
    if (logits instanceof Error) throw logits;
    return {
      logits,
      allowedTokenMass: 0.9,
      modelSha256: (request.model ?? "d").slice(0, 1).repeat(64),
      promptSha256: "p".repeat(64),
      promptVersion: "test@1",
      latencyMs: 1,
    };
  }
}

let store: InMemoryDecisionStore;
let events: PipelineEvent[];

function deps(endpoint: DecidesItems, policy: Policy = CASCADE): DecideDependencies {
  return {
    policies: new PolicyRegistry([policy]),
    store,
    publisher: { publish: async (sent) => void events.push(...sent) },
    endpoint,
    publishLeaseMs: 1000,
    now: () => new Date(Date.UTC(2026, 11, 1)),
  };
}

const body = (id = "T-1") => JSON.stringify({ id, policy: "tickets", state: "charged twice" });
const record = (id = "T-1") => store.get({ itemId: id, policyId: "tickets", policyVersion: 1 });
const made = () => events.filter((e) => e.detailType === DetailType.made).map((e) => e.detail);

beforeEach(() => {
  store = new InMemoryDecisionStore();
  events = [];
});

describe("the policy's cascade", () => {
  it("reads each later tier with its own model, calibration and threshold, without the cascade", () => {
    const [first, second] = tiersOf(CASCADE);
    expect(first).toBe(CASCADE);
    expect(second).toMatchObject({ model: "large", autoThreshold: 0.7, temperature: 2 });
    expect(second!.cascade).toBeUndefined();
    expect(() => tierPolicy(CASCADE, 2)).toThrow(RangeError);
  });

  it("refuses a model asked twice and offsets that do not fit the options, naming the field", () => {
    const base = { ...CASCADE, cascade: undefined };
    expect(() => parsePolicy({ ...base, cascade: [{ model: "small", autoThreshold: 0.9 }] })).toThrow(
      /cascade\.0\.model: "small" is asked earlier/,
    );
    expect(() =>
      parsePolicy({ ...base, cascade: [{ model: "large", autoThreshold: 0.9, optionBias: [0, 1] }] }),
    ).toThrow(/cascade\.0\.optionBias: needs one value per option \(4\), got 2/);
  });

  it("passes an item on only for the reasons another model could change", () => {
    for (const reason of ["below_threshold", "option_needs_review", "out_of_scope", "off_options"] as const)
      expect(passesOn(reason)).toBe(true);
    for (const reason of ["confident", "audit_sample", "uncertified"] as const)
      expect(passesOn(reason)).toBe(false);
  });
});

describe("deciding through the tiers", () => {
  it("asks the second tier when the first is below its threshold, and acts on its answer", async () => {
    const endpoint = new ModelsEndpoint({ small: [1, 0.5, 0, 0], large: [4, 0, 0, 0] });
    expect(await decideMessage(body(), deps(endpoint))).toEqual({ outcome: "decided", route: "auto" });
    expect(endpoint.asked).toEqual(["small", "large"]);
    const stored = (await record())!;
    expect(stored.tiers?.map((t) => [t.model, t.reason, t.chosen])).toEqual([
      ["small", "below_threshold", "billing"],
      ["large", "confident", "billing"],
    ]);
    // The record's own fields are the acting tier's: its hash, its calibration (T = 2).
    expect(stored.modelSha256).toBe("l".repeat(64));
    expect(stored.temperature).toBe(2);
    expect(stored.tiers![0]!.modelSha256).toBe("s".repeat(64));
    expect(stored.tiers![0]!.rawLogits).toEqual([1, 0.5, 0, 0]);
    expect(made()).toEqual([expect.objectContaining({ route: "auto", tier: { index: 2, model: "large" } })]);
  });

  it("does not ask a tier this deployment does not serve: the first tier's doubt goes to people, nothing refused", async () => {
    // A deployed stack's endpoint serves one model (TIER_ENDPOINTS {}): before, the second tier's
    // request was refused by name and every item the first tier passed on was rejected.
    const endpoint = Object.assign(
      new ModelsEndpoint({ small: [1, 0.5, 0, 0], large: new Error("not served") }),
      {
        serves: (model: string) => model !== "large",
      },
    );
    expect(await decideMessage(body(), deps(endpoint))).toEqual({ outcome: "decided", route: "human" });
    expect(endpoint.asked).toEqual(["small"]);
    const stored = (await record())!;
    expect(stored.status).toBe("pending_review");
    expect(stored.reason).toBe("below_threshold");
    expect(stored.tiers?.map((t) => t.model) ?? ["small"]).toEqual(["small"]);
  });

  it("stops at a first tier that is sure: one call, one tier on the record", async () => {
    const endpoint = new ModelsEndpoint({ small: [6, 0, 0, 0], large: new Error("not to be asked") });
    expect(await decideMessage(body(), deps(endpoint))).toEqual({ outcome: "decided", route: "auto" });
    expect(endpoint.asked).toEqual(["small"]);
    expect((await record())!.tiers).toHaveLength(1);
    expect(made()[0]).toMatchObject({ tier: { index: 1, model: "small" } });
  });

  it("passes on an option never automated and the out-of-scope option; the last tier's doubt goes to people", async () => {
    const legal = new ModelsEndpoint({ small: [0, 0, 6, 0], large: [0, 0, 0, 6] });
    expect(await decideMessage(body("T-2"), deps(legal))).toEqual({ outcome: "decided", route: "human" });
    const stored = (await record("T-2"))!;
    expect(stored.tiers?.map((t) => t.reason)).toEqual(["option_needs_review", "out_of_scope"]);
    expect(stored).toMatchObject({ route: "human", reason: "out_of_scope", chosen: "none" });
    expect(made()[0]).toMatchObject({ route: "human", tier: { index: 2, model: "large" } });
  });

  it("sends an audit draw of the first tier to people without asking the second", async () => {
    const audited = { ...CASCADE, auditSampleRate: 1 };
    const endpoint = new ModelsEndpoint({ small: [6, 0, 0, 0], large: [6, 0, 0, 0] });
    await decideMessage(body(), deps(endpoint, audited));
    expect(endpoint.asked).toEqual(["small"]);
    expect((await record())!).toMatchObject({ route: "human", reason: "audit_sample" });
  });

  it("where a certificate is required, a later tier it does not cover automates nothing", async () => {
    const required = parsePolicy({ ...CASCADE, requireCertificate: true });
    const endpoint = new ModelsEndpoint({ small: [1, 0.5, 0, 0], large: [6, 0, 0, 0] });
    await decideMessage(body(), deps(endpoint, required));
    expect((await record())!).toMatchObject({ route: "human", reason: "uncertified" });
  });

  it("lets a failing second tier fail the item whole: no record, no event, asked again from the first", async () => {
    const failing = new ModelsEndpoint({
      small: [1, 0.5, 0, 0],
      large: new EndpointUnavailableError("large is down"),
    });
    await expect(decideMessage(body(), deps(failing))).rejects.toThrow("large is down");
    expect(await record()).toBeUndefined();
    expect(made()).toEqual([]);
    const healthy = new ModelsEndpoint({ small: [1, 0.5, 0, 0], large: [6, 0, 0, 0] });
    expect(await decideMessage(body(), deps(healthy))).toEqual({ outcome: "decided", route: "auto" });
    expect(healthy.asked).toEqual(["small", "large"]);
  });

  it("keeps a policy without a cascade as it was: no tiers on the record or in the event", async () => {
    const single = parsePolicy({ ...CASCADE, model: undefined, cascade: undefined });
    const endpoint = new ModelsEndpoint({ default: [6, 0, 0, 0] });
    await decideMessage(body(), deps(endpoint, single));
    expect(endpoint.asked).toEqual([undefined]);
    expect((await record())!.tiers).toBeUndefined();
    expect(made()[0]).not.toHaveProperty("tier");
  });

  it("reads a tier's answer from a record, a record without tiers being its first tier's", async () => {
    const endpoint = new ModelsEndpoint({ small: [1, 0.5, 0, 0], large: [4, 0, 0, 0] });
    await decideMessage(body(), deps(endpoint));
    const stored = (await record())!;
    expect(tierReading(stored, 0)?.rawLogits).toEqual([1, 0.5, 0, 0]);
    expect(tierReading(stored, 1)?.rawLogits).toEqual([4, 0, 0, 0]);
    expect(tierReading({ rawLogits: [1, 2] }, 0)?.rawLogits).toEqual([1, 2]);
    expect(tierReading({ rawLogits: [1, 2] }, 1)).toBeUndefined();
  });

  it("shows reviewers each tier's answer, and the acting tier's threshold in the reason", async () => {
    const endpoint = new ModelsEndpoint({ small: [1, 0.5, 0, 0], large: [1.2, 0, 0, 0] });
    await decideMessage(body(), deps(endpoint));
    const stored = (await record())!;
    expect(stored).toMatchObject({ route: "human", reason: "below_threshold" });
    expect(reasonText(stored, CASCADE)).toMatch(/below the 70% threshold/);
    const table = tierAnswers(stored, CASCADE);
    expect(table).toContain("1. small");
    expect(table).toContain("below its 80% threshold: passed on");
    expect(table).toContain("2. large");
    expect(table).toContain("below its 70% threshold: to people");
    // A record of one model: no table, that model named (issue 43, item 7).
    expect(tierAnswers({ ...stored, tiers: undefined }, CASCADE)).toBe(
      '<p class="model">Decided by small.</p>',
    );
  });
});
