/**
 * `npm run bench:what-if`: what `decide what-if` costs per 1,000 decisions when it re-scores in
 * process, with the preamble cache (the policy-first layout: the policy's preamble is evaluated
 * once and reused for every item) and without it (the same candidate on the state-first layout,
 * where each item's prompt differs from its first token), and from the stored logits (no call).
 * Items of about 60 tokens under the ticket-routing policy, on a generated model of `--shape`.
 * docs/benchmarks.md quotes the figures.
 */
import { readFile } from "node:fs/promises";
import { loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { inProcessSource } from "../../cli/calibrate/calibrate-in-process.ts";
import { defaultDemoInputs, ensureDemoModel } from "../../endpoint/models/demo-file.ts";
import { isModelShapeName } from "../../endpoint/models/shapes.ts";
import { REALTIME_INSTANCES } from "../../infra/capacity/prices.ts";
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import { type Policy, parsePolicy } from "../../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { type WhatIfSource, whatIf } from "../../shared/use-cases/what-if/what-if.ts";
import { REPO_ROOT } from "../helpers/models.ts";
import { benchModelPath, machineLine, median, words } from "./bench-helpers.ts";

const { values } = parseArgs({
  options: {
    shape: { type: "string", default: "qwen2-0.5b" },
    items: { type: "string", default: "10" },
    rounds: { type: "string", default: "3" },
  },
});
const [items, rounds] = [Number(values.items), Number(values.rounds)];
const shape = values.shape!;
if (shape !== "demo" && !isModelShapeName(shape)) throw new Error(`unknown shape ${shape}`);
const model =
  shape === "demo"
    ? await ensureDemoModel(join(REPO_ROOT, ".cache", "bench-models"), defaultDemoInputs(REPO_ROOT))
    : await benchModelPath(shape);
const live = parsePolicy(
  JSON.parse(await readFile(join(REPO_ROOT, "events", "policies", "ticket-routing.v1.json"), "utf8")),
);
const candidate: Policy = { ...live, version: 2, temperature: 1.3 };
const price = REALTIME_INSTANCES.find((i) => i.name === "ml.c6i.xlarge")!;

/** A store holding `items` decisions of about 60-token tickets, their ids unique to `block`. */
async function decisions(block: string): Promise<{ store: InMemoryDecisionStore; policies: PolicyRegistry }> {
  const store = new InMemoryDecisionStore();
  const at = new Date().toISOString();
  for (let i = 0; i < items; i++)
    await store.create({
      itemId: `BENCH-${block}-${i}`,
      policyId: live.id,
      policyVersion: 1,
      status: "auto_approved",
      route: "auto",
      reason: "confident",
      chosen: "billing",
      topProbability: 0.9,
      rawLogits: [2, 0, 0, 0],
      allowedTokenMass: 0.9,
      state: `ticket ${block} ${i}: ${words(60, i * 13 + block.length)}`,
      createdAt: at,
      updatedAt: at,
      eventPublished: true,
    });
  return { store, policies: new PolicyRegistry([live]) };
}

/** Milliseconds per item of one block: the endpoint's busy time and the wall time. */
async function block(
  name: string,
  policy: Policy,
  source: WhatIfSource,
): Promise<{ busy: number; wall: number }> {
  const result = await whatIf(await decisions(name), {
    candidate: policy,
    source,
    since: "2020-01-01T00:00:00.000Z",
    sample: items,
  });
  return { busy: result.cost.busyMs / items, wall: result.cost.wallMs / items };
}

console.log(
  `${machineLine()}\nmodel: ${model} (${shape}); blocks of ${items} items of about 60 tokens, ${rounds} rounds, interleaved; load average ${loadavg()[0]!.toFixed(2)} at start`,
);
const source = await inProcessSource(model);
const rescore: WhatIfSource = { kind: "rescore", endpoint: source.endpoint, concurrency: 1 };
const reused: number[] = [];
const fresh: number[] = [];
let stored = 0;
try {
  // A first block unmeasured: the model's first-call setup is in neither figure.
  await block("warm", candidate, rescore);
  for (let r = 0; r < rounds; r++) {
    reused.push((await block(`p${r}`, candidate, rescore)).busy);
    fresh.push((await block(`s${r}`, { ...candidate, layout: "state-first" }, rescore)).busy);
  }
  stored = (await block("stored", candidate, { kind: "stored-logits" })).wall;
} finally {
  await source.close();
}
const line = (label: string, msPerItem: number) =>
  console.log(
    `${label.padEnd(46)} ${msPerItem.toFixed(1).padStart(8)} ms/item  ${msPerItem.toFixed(0).padStart(6)} s per 1,000  $${((msPerItem * price.dollarsPerHour) / 3600).toFixed(4)} per 1,000 (${price.name} at $${price.dollarsPerHour}/h)`,
  );
line("re-scored, policy-first (preamble reused)", median(reused));
line("re-scored, state-first (no shared preamble)", median(fresh));
line("stored logits (no endpoint call)", stored);
console.log(
  `median of ${rounds} blocks each; preamble cache ${(median(fresh) / median(reused)).toFixed(2)}x; per-block policy-first ${reused.map((x) => x.toFixed(0)).join(", ")} ms, state-first ${fresh.map((x) => x.toFixed(0)).join(", ")} ms; load average ${loadavg()[0]!.toFixed(2)} at end`,
);
