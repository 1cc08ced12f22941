/**
 * `npm run bench:cascade`: one tier against two on the held-back items
 * (events/items/demo-heldout.jsonl, never fitted on), in one run. Each item is scored by the
 * first demo model and by `demo-large`, one after the other, through the decide path's own tier
 * loop (`scoreThroughTiers`) on scorers in this process, and each score is timed. One tier: the
 * policy as it stands without a cascade. Two tiers: `demo` then `demo-large`, the second asked
 * only for what the first passed on (a policy without a cascade of its own gets one at its own
 * threshold). The larger model alone is printed for reference. Seconds per item: the first
 * model's time, plus the second's on the items it was asked. Audit draws are off: the figures
 * are about the models.
 */
import { readFile } from "node:fs/promises";
import { loadavg } from "node:os";
import { join } from "node:path";
import { defaultDemoInputs, ensureDemoModel } from "../../endpoint/models/demo-file.ts";
import { DecisionModel } from "../../endpoint/runtime/decision-model.ts";
import { DecisionScorer } from "../../endpoint/scorer/scorer.ts";
import { InProcessDecisionEndpoint } from "../../endpoint/server/in-process-endpoint.ts";
import { EndpointsByModel } from "../../shared/adapters/endpoints-by-model.ts";
import type { DecidesItems } from "../../shared/domain/decision-endpoint.ts";
import type { Item } from "../../shared/domain/item.ts";
import type { Policy } from "../../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { scoreThroughTiers, type TierOutcome } from "../../shared/use-cases/cascade-scoring.ts";
import { REPO_ROOT } from "../helpers/models.ts";
import { machineLine } from "./bench-helpers.ts";

interface Row {
  readonly policy: string;
  readonly label: string;
  readonly clear: boolean;
  readonly state: Item["state"];
}

/** What one way of deciding did with one item. */
interface Outcome {
  readonly route: "auto" | "human";
  readonly chosen: string;
  readonly ms: number;
}

const dir = join(REPO_ROOT, ".cache", "demo-models");
const inputs = defaultDemoInputs(REPO_ROOT);
const [small, large] = [
  await ensureDemoModel(dir, inputs),
  await ensureDemoModel(dir, inputs, undefined, { name: "demo-large" }),
];
const policies = await PolicyRegistry.fromFolder(inputs.policiesDir);
const rows = (await readFile(join(REPO_ROOT, "events", "items", "demo-heldout.jsonl"), "utf8"))
  .split("\n")
  .filter((line) => line.trim())
  .map((line) => JSON.parse(line) as Row);

const load = async (path: string) => {
  const model = await DecisionModel.load({ modelPath: path, threads: 2 });
  return { model, scorer: await DecisionScorer.create(model) };
};
const first = await load(small);
// The first model answers to "demo" (what the bench's policies name it), the second to its own name.
const second = await load(large);
const endpoint = new EndpointsByModel(
  new InProcessDecisionEndpoint(first.scorer, "demo"),
  new Map([["demo-large", new InProcessDecisionEndpoint(second.scorer, "demo-large")]]),
);

/** The policy without a cascade, with its own, or with `demo-large` after it; no audit draws. */
function variant(policy: Policy, kind: "one" | "two" | "large"): Policy {
  const base = { ...policy, auditSampleRate: 0, auditBands: undefined };
  const cascade = policy.cascade ?? [
    { model: "demo-large", autoThreshold: policy.autoThreshold, temperature: 1 },
  ];
  if (kind === "one") return { ...base, cascade: undefined };
  if (kind === "two") return { ...base, cascade };
  // The larger model alone, read with the second tier's calibration and threshold.
  const tier = cascade[0]!;
  return {
    ...base,
    cascade: undefined,
    model: tier.model,
    autoThreshold: tier.autoThreshold,
    temperature: tier.temperature,
  };
}

const results: { row: Row; one: Outcome; two: Outcome; large: Outcome }[] = [];
const ms = (tiers: readonly TierOutcome[]) => tiers.reduce((sum, t) => sum + t.decision.latencyMs, 0);
const outcome = (tiers: readonly TierOutcome[]): Outcome => ({
  route: tiers.at(-1)!.routing.route,
  chosen: tiers.at(-1)!.routing.chosen,
  ms: ms(tiers),
});
console.log(`${machineLine()}; load average ${loadavg()[0]!.toFixed(2)} at start`);
for (const [i, row] of rows.entries()) {
  const policy = policies.current(row.policy)!;
  const item = { id: `heldout-${i}`, policy: row.policy, state: row.state };
  // Each model scores the item once, timed; the cascade then runs the decide path's own tier loop
  // on those answers, so it costs the first model's time plus the second's where it asks it.
  const one = await scoreThroughTiers(item, variant(policy, "one"), endpoint);
  const large = await scoreThroughTiers(item, variant(policy, "large"), endpoint);
  const answered = new Map([
    ["demo", one[0]!.decision],
    ["demo-large", large[0]!.decision],
  ]);
  const replay: DecidesItems = { decide: async (_item, tier) => answered.get(tier.model ?? "demo")! };
  const two = await scoreThroughTiers(item, variant(policy, "two"), replay);
  results.push({ row, one: outcome(one), two: outcome(two), large: outcome(large) });
}

const asked = results.filter((r) => r.two.ms > r.one.ms).length;
console.log(
  `${rows.length} held-back items (${rows.filter((r) => r.clear).length} clear); demo then demo-large on ${asked} of them (${Math.round((100 * asked) / rows.length)}%)`,
);
console.log("                      to people          wrong automatic actions   seconds per item");
for (const kind of ["one", "two", "large"] as const) {
  const people = results.filter((r) => r[kind].route === "human").length;
  const wrong = results.filter((r) => r[kind].route === "auto" && r[kind].chosen !== r.row.label).length;
  const auto = results.filter((r) => r[kind].route === "auto").length;
  const seconds = results.reduce((sum, r) => sum + r[kind].ms, 0) / results.length / 1000;
  const name = { one: "one tier (demo)", two: "two tiers (cascade)", large: "demo-large alone" }[kind];
  console.log(
    `${name.padEnd(22)}${`${people}/${rows.length} (${Math.round((100 * people) / rows.length)}%)`.padEnd(19)}${`${wrong} of ${auto} automated`.padEnd(26)}${seconds.toFixed(3)}`,
  );
}
console.log(`load average ${loadavg()[0]!.toFixed(2)} at end`);
for (const loaded of [first, second]) {
  await loaded.scorer.dispose();
  await loaded.model.dispose();
}
