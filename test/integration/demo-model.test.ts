/**
 * The demo model through the real scorer: a computed bag-of-words GGUF that routes the sample
 * items sensibly (clear cases confidently, mixed ones less so).
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DecisionModel } from "../../endpoint/runtime/decision-model.ts";
import { DecisionScorer } from "../../endpoint/scorer/scorer.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { demoFigures, scoreHeldOut, scoreUnderPolicy } from "../helpers/demo-evaluation.ts";
import { demoLargeModelPath, demoModelPath, REPO_ROOT } from "../helpers/models.ts";

let policies: PolicyRegistry;
let model: DecisionModel;
let scorer: DecisionScorer;

beforeAll(async () => {
  policies = await PolicyRegistry.fromFolder(join(REPO_ROOT, "events", "policies"));
  model = await DecisionModel.load({ modelPath: await demoModelPath(), threads: 2 });
  scorer = await DecisionScorer.create(model);
});
afterAll(async () => {
  await scorer?.dispose();
  await model?.dispose();
});

async function decide(policyId: string, state: unknown) {
  const answer = await scoreUnderPolicy(scorer, policies.current(policyId)!, state);
  return { chosen: answer.chosen, top: Math.max(...answer.probabilities) };
}

describe("demo model", () => {
  it("routes every sample item to the option a person would pick", async () => {
    const expected: Record<string, string> = {
      "TICKET-1001": "billing",
      "TICKET-1002": "technical",
      "TICKET-1003": "account",
      "TICKET-1004": "out_of_scope",
      "POST-2001": "allow",
      "POST-2002": "restrict",
      "POST-2003": "remove",
      "APP-3001": "true",
      "APP-3002": "false",
    };
    const samples = (await readFile(join(REPO_ROOT, "events", "items", "samples.jsonl"), "utf8"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    for (const item of samples)
      expect((await decide(item.policy, item.state)).chosen, item.id).toBe(expected[item.id]);
  });

  it("is sure of the clear billing ticket and unsure of a mixed one", async () => {
    const clear = await decide("ticket-routing", {
      subject: "Charged twice",
      body: "My card was charged twice for my subscription this month. Please refund the extra payment.",
    });
    expect(clear).toMatchObject({ chosen: "billing" });
    expect(clear.top).toBeGreaterThan(0.9);
    const policy = policies.current("ticket-routing")!;
    const mixed = await decide("ticket-routing", "hello, a question about my account and my bill");
    const automated =
      mixed.top >= policy.autoThreshold && policy.options.find((o) => o.id === mixed.chosen)!.automate;
    expect(automated, JSON.stringify(mixed)).toBe(false);
  });

  it("reads words in any case, after quotes and punctuation, and in structured states", async () => {
    for (const state of [
      "REFUND my DOUBLE CHARGE!!",
      '"Refund" my double charge, please.',
      { subject: "Refund", body: "Double charge on my card." },
    ])
      expect(await decide("ticket-routing", state), JSON.stringify(state)).toMatchObject({
        chosen: "billing",
      });
  });

  it("leaves an item of words it has never seen unsure under every sample policy", async () => {
    // The policy's own question and option words carry no net evidence (demo-fit.ts), so nothing
    // but the item's words can make the model sure; before, this went to "remove" under moderation.
    for (const id of ["ticket-routing", "content-moderation", "pre-screen"]) {
      const policy = policies.current(id)!;
      const answer = await decide(id, "Vorpal wuzzles gyred quixotically");
      expect(answer.top, `${id}: ${JSON.stringify(answer)}`).toBeLessThan(policy.autoThreshold);
    }
  });

  it("reads no English word into a foreign sentence, under every sample policy", async () => {
    // Issue 27 #18: "Diese" read as "die" + "se" and "ich" as "I" + "ch" (remove 0.92 under
    // moderation, account 0.94 under tickets); only whole words and English inflections count.
    for (const id of ["ticket-routing", "content-moderation", "pre-screen"]) {
      const policy = policies.current(id)!;
      const answer = await decide(id, "Diese Stadt ist wunderschön, ich liebe die Altstadt");
      expect(answer.top, `${id}: ${JSON.stringify(answer)}`).toBeLessThan(policy.autoThreshold);
    }
  });

  it("does not route an out-of-scope question to a team", async () => {
    // Issue 27 #18: automated to the account team at 0.86 (through "in", a piece of "bring").
    const policy = policies.current("ticket-routing")!;
    const answer = await decide("ticket-routing", "Can I bring my dog to your office?");
    const automated =
      answer.top >= policy.autoThreshold && policy.options.find((o) => o.id === answer.chosen)!.automate;
    expect(automated, JSON.stringify(answer)).toBe(false);
  });

  // A regression floor, not a target: docs/getting-started.md states the measured figures (npm run bench:demo).
  it("handles most clear held-back items and automates few wrong ones", async () => {
    const total = demoFigures(await scoreHeldOut(await demoModelPath())).find((f) => f.policy === "all")!;
    expect(total.clear).toBeGreaterThanOrEqual(40);
    expect(total.clearHandled / total.clear).toBeGreaterThanOrEqual(0.7);
    expect(total.wrongAutomated / (total.clear + total.ambiguous)).toBeLessThanOrEqual(0.06);
  });

  it("has a second model, demo-large, that is as unsure as the first of words it never saw", async () => {
    // demo-large automates what demo passes on (the moderation policy's cascade): it must not
    // read sureness into text it knows nothing of.
    const large = await DecisionModel.load({ modelPath: await demoLargeModelPath(), threads: 2 });
    const largeScorer = await DecisionScorer.create(large);
    try {
      const policy = policies.current("content-moderation")!;
      const tier = policy.cascade![0]!;
      for (const state of [
        "Vorpal wuzzles gyred quixotically",
        "Diese Stadt ist wunderschön, ich liebe die Altstadt",
      ]) {
        const answer = await scoreUnderPolicy(largeScorer, policy, state);
        expect(Math.max(...answer.probabilities), state).toBeLessThan(tier.autoThreshold);
      }
    } finally {
      await largeScorer.dispose();
      await large.dispose();
    }
  });
});
