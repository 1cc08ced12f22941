/**
 * `npm run sizing`: the sizing table of docs/deploying.md, from the capacity model on the synthesized template
 * (`npm run synth` first; `--template` for another) and the per-item times `npm run bench:cost`
 * measured. For each rate and workload it finds the fewest instances (held fixed, the minimum and
 * maximum both, with what the stack derives from them) that keep up with a steady 30-minute load:
 * no dead letters and less than half a minute of backlog at the end, and a p99 within twice the best
 * p99 of the rate (an ideal router on four times the busy count). It prints a Markdown table:
 * instances, the decide function's concurrency, cost per 1,000 and per month, and the quotas to raise.
 *
 * Flags: --template FILE, --rates 1,10,100,1000, --instance-type ml.c6i.xlarge, --minutes 30,
 * --routing random|least-outstanding|least-outstanding-exact (what if the endpoint routed so,
 * whatever the template asks; the exact one knows every instance's load, a bound no router beats),
 * --batches 1000,10000,100000,1000000 and --async-max 16 (the async lane's table: one batch each,
 * at the template's maximum and at these), --second-model-share S and --second-model-ratio 3 (a
 * cascade's second model on the same instances: S of the items also asked of it, at R times the
 * first model's time per item).
 */
import { readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { asyncSizingTable } from "../capacity/async-sizing.ts";
import { liveLaneIsAsync } from "../capacity/async-template.ts";
import { AWS_BEHAVIOUR } from "../capacity/aws-behaviour.ts";
import { costOf } from "../capacity/cost.ts";
import {
  instanceSecondsPerItem,
  MEASURED_TIMES,
  type SecondModelLoad,
  type Workload,
  withSecondModel,
} from "../capacity/measured-times.ts";
import { withInstanceType } from "../capacity/overrides.ts";
import { formatDollars, formatSeconds } from "../capacity/report.ts";
import type { PipelineShape, Routing } from "../capacity/shape.ts";
import { type FixedRun, sizeFleet, TAIL_BAR } from "../capacity/sizing-search.ts";
import { readPipelineShape } from "../capacity/template/template-reader.ts";

const { values } = parseArgs({
  options: {
    template: { type: "string", default: "cdk.out/DecisionPipeline.template.json" },
    rates: { type: "string", default: "1,10,100,1000" },
    "instance-type": { type: "string", default: "ml.c6i.xlarge" },
    minutes: { type: "string", default: "30" },
    routing: { type: "string" },
    batches: { type: "string", default: "1000,10000,100000,1000000" },
    "async-max": { type: "string", default: "16" },
    "second-model-share": { type: "string" },
    "second-model-ratio": { type: "string", default: "3" },
  },
});
const ROUTINGS: readonly Routing[] = ["random", "least-outstanding", "least-outstanding-exact"];
const routing = values.routing as Routing | undefined;
if (routing !== undefined && !ROUTINGS.includes(routing)) {
  console.error(`sizing: --routing must be one of ${ROUTINGS.join(", ")}, got "${routing}"`);
  process.exit(2);
}
const seconds = Number(values.minutes) * 60;
const secondModel = secondModelOf(values["second-model-share"], values["second-model-ratio"]!);

/** A cascade's second model on the same instances (`--second-model-share S --second-model-ratio R`). */
function secondModelOf(share: string | undefined, ratio: string): SecondModelLoad | undefined {
  if (share === undefined) return undefined;
  const [s, r] = [Number(share), Number(ratio)];
  if (share.trim() === "" || !(s >= 0 && s <= 1) || !Number.isFinite(r) || !(r > 0)) {
    console.error(
      `sizing: --second-model-share must be 0 to 1 and --second-model-ratio above 0, got ${share} and ${ratio}`,
    );
    process.exit(2);
  }
  return { share: s, ratio: r };
}

/** Seconds per item on the instance type, with the second model's share when given. */
const perItem = (workload: Workload) =>
  withSecondModel(instanceSecondsPerItem(instanceType, workload), secondModel);
const instanceType = values["instance-type"];
const template = JSON.parse(readFileSync(values.template, "utf8")) as {
  Resources: Record<string, { Type: string; Properties?: Record<string, unknown> }>;
};

/** The live lane's shape, read from the template with --instance-type and --routing applied. */
function liveShape(): PipelineShape {
  // The container's own defaults only matter for a template that sets none (today's sets the deadline).
  const read = withInstanceType(
    readPipelineShape(template, { containerDefaults: { queueSize: 16, deadlineSeconds: 60 } }),
    instanceType,
  ).shape;
  return routing ? { ...read, endpoint: { ...read.endpoint, routing } } : read;
}

type Row = FixedRun;

/** The fewest instances that keep up at `rate` with `workload`'s items, within the tail bar when any count meets it. */
const size = (base: PipelineShape, rate: number, workload: Workload) => {
  const { run, keptUp, bestP99Seconds, keepingUpInstances } = sizeFleet({
    base,
    ratePerSecond: rate,
    secondsPerItem: perItem(workload),
    durationSeconds: seconds,
  });
  return { row: run, keptUp, bestP99Seconds, keepingUpInstances };
};

/**
 * Whether the template's table has an index whose partition key is the record's status: a
 * handful of key values take nearly every write, past DynamoDB's per-partition limit at about 100
 * items/s (the sharded indexes of today's table do not).
 */
const statusIndexed = Object.values(template.Resources).some(
  (r) =>
    r.Type === "AWS::DynamoDB::Table" &&
    (
      (r.Properties?.GlobalSecondaryIndexes ?? []) as {
        KeySchema: { AttributeName: string; KeyType: string }[];
      }[]
    ).some((index) => index.KeySchema.some((k) => k.KeyType === "HASH" && k.AttributeName === "status")),
);

/** The quotas a deployment of this size meets. */
function quotas(row: Row, rate: number, keptUp: boolean): string {
  const lambda = AWS_BEHAVIOUR.lambda;
  const out: string[] = [];
  if (keptUp && row.instances > 2)
    out.push(`SageMaker: ${row.instances} × ${instanceType} for endpoint usage`);
  const concurrency = row.result.peakConcurrency + (row.shape.batch?.maxConcurrency ?? 0);
  if (concurrency > lambda.accountConcurrency * 0.8)
    out.push(
      `Lambda concurrent executions (default ${lambda.accountConcurrency.toLocaleString("en")}) to ${concurrency.toLocaleString("en")}+`,
    );
  if ((row.shape.intake.maxConcurrency ?? 0) > 1_000)
    out.push("no quota lifts a mapping's MaximumConcurrency past 1,000");
  if (rate >= 100 && statusIndexed)
    out.push("DynamoDB: an index keyed on the record's status runs hot (a few key values take every write)");
  return out.length > 0 ? out.join("; ") : "none";
}

/** The live lane's table: for each rate and workload, the fewest instances that keep up. */
function liveTable(base: PipelineShape): void {
  console.log(
    `# sizing: ${values.template}, ${instanceType}, routing ${base.endpoint.routing}, steady ${values.minutes} min, ${MEASURED_TIMES.source}`,
  );
  if (secondModel)
    console.log(
      `cascade: ${Number((secondModel.share * 100).toFixed(1))}% of items also asked of a second model at ${secondModel.ratio}x the first's time per item (an average: each passed-on item takes ${1 + secondModel.ratio}x, so tails run longer than this shows)`,
    );
  console.log(
    `a count keeps up (no dead letters, under half a minute of arrivals waiting at the end) and answers within ${TAIL_BAR}x the best p99 of the rate (an ideal router on four times the busy count)`,
  );
  console.log(
    "\n| items/s | workload | instances | decide concurrency (peak / MaximumConcurrency) | p99 | $ per 1,000 | $ per month | best p99 of the rate | keeping up alone | quotas to raise |",
  );
  console.log("|---|---|---|---|---|---|---|---|---|---|");
  for (const rate of values.rates.split(",").map(Number)) {
    for (const workload of ["fresh", "preambleCached"] as const) {
      const { row, keptUp, bestP99Seconds: best, keepingUpInstances } = size(base, rate, workload);
      const label = workload === "fresh" ? "fresh" : "cached preamble";
      if (!row) {
        console.log(
          `| ${rate} | ${label} | the topology derives no stack for this many instances | | | | | | | |`,
        );
        continue;
      }
      const r = row.result;
      const cost = costOf(row.shape, r.usage, r.decided);
      const ideal = Math.ceil(rate * perItem(workload));
      // A row that does not keep up has no price per item worth printing: its backlog only grows.
      const money = keptUp
        ? [
            cost.perThousand === undefined ? "n/a" : formatDollars(cost.perThousand),
            formatDollars(cost.perMonth),
          ]
        : ["n/a", "n/a"];
      const cells = [
        String(rate),
        label,
        keptUp
          ? String(row.instances)
          : `none: ${row.instances} decide ${Math.round(r.decided / seconds)}/s (${ideal} busy ones would be needed)`,
        `${r.peakConcurrency} / ${row.shape.intake.maxConcurrency ?? "none"}`,
        keptUp ? formatSeconds(r.p99Seconds) : "grows",
        ...money,
        keptUp ? (best === undefined ? `no count within ${TAIL_BAR}x` : formatSeconds(best)) : "",
        keepingUpInstances === undefined ? "" : String(keepingUpInstances),
        quotas(row, rate, keptUp),
      ];
      console.log(`| ${cells.join(" | ")} |`);
    }
  }
}

// A template whose live lane runs on the async endpoint has no real-time fleet to size: its
// items are objects like a batch's (the table below), and it costs nothing idle.
if (liveLaneIsAsync(template))
  console.log(
    `# sizing: ${values.template}: the live lane runs on the async endpoint (-c endpointMode=async): no real-time instances to size, idle $0 per month; its items go in objects as a batch's do (below)`,
  );
else liveTable(liveShape());

// The async lane: one batch of each size, from an idle endpoint at zero instances.
console.log("");
for (const line of asyncSizingTable(template, {
  batches: values.batches.split(",").map(Number),
  maxInstances: values["async-max"].split(",").map(Number),
}))
  console.log(line);
