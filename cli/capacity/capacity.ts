/**
 * `decide capacity`: the capacity model on a synthesized template. Reads what decides capacity
 * from the template (instances, scaling, event source concurrency, batch size, visibility,
 * receive count, the container's queue and deadline), takes the per-item time `npm run bench:cost`
 * measured, simulates the load, and prints a row per minute and one summary line.
 */
import { existsSync, readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import { costOf } from "../../infra/capacity/cost.ts";
import { TemplateShapeError, UnknownCapacityError } from "../../infra/capacity/errors.ts";
import type { LoadProfile } from "../../infra/capacity/load.ts";
import {
  instanceSecondsPerItem,
  type SecondModelLoad,
  serverlessSecondsPerItem,
  type Workload,
  withSecondModel,
} from "../../infra/capacity/measured-times.ts";
import { withInstanceCounts, withInstanceType } from "../../infra/capacity/overrides.ts";
import { describeRun, minuteTable, type Suggestion, summaryLine } from "../../infra/capacity/report.ts";
import type { PipelineShape } from "../../infra/capacity/shape.ts";
import { simulate } from "../../infra/capacity/simulate.ts";
import { sizeFleet } from "../../infra/capacity/sizing-search.ts";
import { type ContainerDefaults, readPipelineShape } from "../../infra/capacity/template/template-reader.ts";
import { CONTAINER_ENV } from "../../shared/domain/container-env.ts";
import { CommandError, integerFlag, requiredFlag, UsageError } from "../args.ts";
import type { OneShotCommand, Printed } from "../command.ts";
import { parseDuration } from "../duration.ts";

/** The template `npm run synth` writes for the default stack name. */
const DEFAULT_TEMPLATE = "cdk.out/DecisionPipeline.template.json";

/** The usage text `decide capacity --help` prints. */
export const capacityUsage = `decide capacity --rate R [--for 30m] [--burst X --burst-for D [--burst-at 5m]]
                [--template ${DEFAULT_TEMPLATE}] [--preamble-cached]
                [--instance-type T] [--min-instances N] [--max-instances N] [--seed N]
                [--second-model-share S [--second-model-ratio 3]]

Simulates R items/s (Poisson) for --for against the stack in --template (run \`npm run synth\`
first): SQS, the decide function's event source mapping and the capacity follower that sets its
concurrency, its endpoint calls and retries, the endpoint's instances with their admission queue
and deadline, SageMaker's auto scaling and Lambda's scale-up, visibility timeouts and dead
letters. --burst X multiplies the rate by X for --burst-for from --burst-at (default 5m; a burst
to the end is a step). --instance-type, --min-instances and --max-instances ask "what if" as a
deploy with -c instanceType / -c initialInstanceCount / -c maxInstanceCount would (what the
stack derives follows); the same fixed count for both gives the figures of \`npm run sizing\`.

Per-item times are the ones \`npm run bench:cost\` measured (shared/domain/topology/measured-times.json),
one row each in the sizing table: fresh items (the default: every item's whole prompt is
evaluated) or, with --preamble-cached, items under a policy preamble the instance has already
evaluated (the same policy's items in a row on one instance reuse it; about 5 times faster).
Use --preamble-cached when your traffic is mostly one or a few policies; fresh is the safe bound.
A cascade's second model served by the same instances: --second-model-share S (0 to 1) of the
items are also asked of it, at --second-model-ratio times the first model's time per item
(default 3, about a 1.5B model behind a 0.5B one; the demo's demo-large measured 4.2).
Durations: 90s, 30m, 2h, 1d. Prints a row per minute and ends with one summary line, which names
the instances \`npm run sizing\` would suggest for R/s of that workload.`;

/** Seconds in a duration flag (`90s`, `30m`, `2h`). */
function seconds(name: string, value: string): number {
  const ms = parseDuration(value, name);
  if (!(ms > 0)) throw new UsageError(`--${name} must be longer than 0, got "${value}"`);
  return ms / 1000;
}

/** A positive number flag. */
function positiveNumber(name: string, value: string): number {
  const parsed = Number(value);
  if (!Number.isFinite(parsed) || parsed <= 0)
    throw new UsageError(`--${name} must be a positive number, got "${value}"`);
  return parsed;
}

/** The second model's load, when --second-model-share is given. */
function secondModelOf(values: Record<string, string | boolean | undefined>): SecondModelLoad | undefined {
  const share = values["second-model-share"] as string | undefined;
  const ratio = values["second-model-ratio"] as string | undefined;
  if (share === undefined) {
    if (ratio !== undefined) throw new UsageError("--second-model-ratio needs --second-model-share");
    return undefined;
  }
  const parsed = Number(share);
  if (share.trim() === "" || !Number.isFinite(parsed) || parsed < 0 || parsed > 1)
    throw new UsageError(`--second-model-share must be a share from 0 to 1, got "${share}"`);
  return { share: parsed, ratio: ratio === undefined ? 3 : positiveNumber("second-model-ratio", ratio) };
}

/** The load the flags describe. */
function loadOf(values: Record<string, string | boolean | undefined>): LoadProfile {
  const rate = positiveNumber("rate", requiredFlag("rate", values.rate as string | undefined));
  const durationSeconds = seconds("for", (values.for as string | undefined) ?? "30m");
  if (values.burst === undefined) {
    if (values["burst-for"] !== undefined || values["burst-at"] !== undefined)
      throw new UsageError("--burst-for and --burst-at need --burst X");
    return { ratePerSecond: rate, durationSeconds };
  }
  const factor = positiveNumber("burst", values.burst as string);
  const burstFor = seconds("burst-for", requiredFlag("burst-for", values["burst-for"] as string));
  const startSeconds = seconds("burst-at", (values["burst-at"] as string | undefined) ?? "5m");
  if (startSeconds >= durationSeconds)
    throw new UsageError(`--burst-at (${startSeconds} s) must fall within --for (${durationSeconds} s)`);
  return { ratePerSecond: rate, durationSeconds, burst: { factor, startSeconds, durationSeconds: burstFor } };
}

/** The container's own defaults, loaded only when the template leaves a setting to them. */
async function containerDefaults(text: string): Promise<ContainerDefaults | undefined> {
  const set = (name: string) => text.includes(`"${name}"`);
  if (set(CONTAINER_ENV.DECIDE_QUEUE_SIZE) && set(CONTAINER_ENV.DECIDE_DEADLINE_MS)) return undefined;
  const { SETTINGS } = await import("../../endpoint/server/config.ts");
  return { queueSize: SETTINGS.queueSize.fallback(), deadlineSeconds: SETTINGS.deadlineMs.fallback() / 1000 };
}

/** The shape the flags ask about (`typed`: before the counts change), with a line per override. */
function shapeOf(
  shape: PipelineShape,
  what: Pick<CapacityOptions, "instanceType" | "minInstances" | "maxInstances">,
): { shape: PipelineShape; typed: PipelineShape; notes: string[] } {
  const notes: string[] = [];
  try {
    if (what.instanceType !== undefined) {
      const changed = withInstanceType(shape, what.instanceType);
      shape = changed.shape;
      notes.push(...changed.notes);
    }
    const typed = shape;
    if (what.maxInstances !== undefined || what.minInstances !== undefined) {
      const changed = withInstanceCounts(shape, {
        ...(what.minInstances !== undefined ? { minInstances: what.minInstances } : {}),
        ...(what.maxInstances !== undefined ? { maxInstances: what.maxInstances } : {}),
      });
      shape = changed.shape;
      notes.push(...changed.notes.map((n) => `${n} (as the stack derives it)`));
    }
    return { shape, typed, notes };
  } catch (error) {
    if (error instanceof RangeError) throw new UsageError(error.message);
    throw error;
  }
}

/** Seconds per item for the shape's endpoint. */
function secondsPerItem(shape: PipelineShape, workload: Workload): number {
  const e = shape.endpoint;
  return e.mode === "serverless"
    ? serverlessSecondsPerItem(e.serverless?.memoryMiB ?? 0, workload)
    : instanceSecondsPerItem(String(e.instanceType), workload);
}

/** How long the sizing search holds each steady rate (as `npm run sizing` does). */
const SIZING_SECONDS = 30 * 60;

/** The fewest instances `npm run sizing` finds for `rate` on this template's instance type. */
function suggestInstances(
  typed: PipelineShape,
  rate: number,
  perItem: number,
  workload: Workload,
): Suggestion {
  const { run, keptUp } = sizeFleet({
    base: typed,
    ratePerSecond: rate,
    secondsPerItem: perItem,
    durationSeconds: SIZING_SECONDS,
  });
  return { instances: keptUp ? run?.instances : undefined, workload };
}

/** What `decide capacity` was asked. */
interface CapacityOptions {
  readonly load: LoadProfile;
  readonly seed: number;
  readonly template: string;
  readonly instanceType: string | undefined;
  readonly minInstances: number | undefined;
  readonly maxInstances: number | undefined;
  readonly workload: Workload;
  readonly secondModel: SecondModelLoad | undefined;
}

/** What the simulation found, with what it ran on. */
interface CapacityRun {
  readonly shape: PipelineShape;
  readonly notes: string[];
  readonly perItem: number;
  readonly result: ReturnType<typeof simulate>;
  /** What `npm run sizing` suggests for the rate (real-time), from the same search. */
  readonly suggestion: Suggestion | undefined;
}

function parse(argv: string[]): CapacityOptions {
  const { values } = parseArgs({
    args: argv,
    options: {
      rate: { type: "string" },
      for: { type: "string" },
      burst: { type: "string" },
      "burst-for": { type: "string" },
      "burst-at": { type: "string" },
      template: { type: "string" },
      "preamble-cached": { type: "boolean", default: false },
      "instance-type": { type: "string" },
      "min-instances": { type: "string" },
      "max-instances": { type: "string" },
      seed: { type: "string" },
      "second-model-share": { type: "string" },
      "second-model-ratio": { type: "string" },
    },
    strict: true,
    allowPositionals: false,
  });
  return {
    load: loadOf(values),
    seed: integerFlag("seed", values.seed, 1, 0, 2 ** 31 - 1),
    template: values.template ?? DEFAULT_TEMPLATE,
    instanceType: values["instance-type"],
    minInstances: integerFlag("min-instances", values["min-instances"], undefined, 1, 100_000),
    maxInstances: integerFlag("max-instances", values["max-instances"], undefined, 1, 100_000),
    workload: values["preamble-cached"] ? "preambleCached" : "fresh",
    secondModel: secondModelOf(values),
  };
}

/** Reads the template's shape, applies the overrides and simulates the load. */
async function run(options: CapacityOptions): Promise<CapacityRun> {
  const path = options.template;
  if (!existsSync(path))
    throw new CommandError(`no template at ${path}: run \`npm run synth\` first, or pass --template FILE`);
  const text = readFileSync(path, "utf8");
  try {
    const defaults = await containerDefaults(text);
    const read = readPipelineShape(JSON.parse(text), defaults ? { containerDefaults: defaults } : {});
    const { shape, typed, notes } = shapeOf(read, options);
    const perItem = withSecondModel(secondsPerItem(shape, options.workload), options.secondModel);
    const result = simulate({ shape, load: options.load, secondsPerItem: perItem, seed: options.seed });
    const suggestion =
      shape.endpoint.mode === "realtime"
        ? suggestInstances(typed, options.load.ratePerSecond, perItem, options.workload)
        : undefined;
    return { shape, notes, perItem, result, suggestion };
  } catch (error) {
    if (error instanceof SyntaxError) throw new CommandError(`${path} is not JSON: ${error.message}`);
    if (error instanceof RangeError) throw new UsageError(error.message);
    if (error instanceof TemplateShapeError || error instanceof UnknownCapacityError)
      throw new CommandError(error.message, { cause: error });
    throw error;
  }
}

/** What the second model adds, in words. */
function secondModelLines(second: SecondModelLoad | undefined): string[] {
  if (!second) return [];
  const factor = 1 + second.share * second.ratio;
  return [
    `cascade: ${Number((second.share * 100).toFixed(1))}% of items also asked of a second model at ${second.ratio}x the first's time: ${Number(factor.toFixed(3))}x the time per item on average (each passed-on item takes ${1 + second.ratio}x, so tails run longer than this shows)`,
  ];
}

/** A row per minute between the run's description and its summary line. */
function print(
  { shape, notes, perItem, result, suggestion }: CapacityRun,
  options: CapacityOptions,
): Printed {
  const { load } = options;
  const lines = [
    `template: ${options.template}`,
    ...notes.map((n) => `what if: ${n}`),
    ...secondModelLines(options.secondModel),
    ...describeRun(shape, load, perItem),
    "",
    ...minuteTable(result),
    "",
    summaryLine(shape, load, result, costOf(shape, result.usage, result.decided), suggestion),
  ];
  return { lines, exitCode: 0 };
}

/** `decide capacity`: parse, run, print. */
export const capacityCommand: OneShotCommand<CapacityOptions, CapacityRun> = { parse, run, print };
