/**
 * `decide capacity`, by lane: `--lane batch --items N` simulates one batch on the async lane
 * (`capacity-batch.ts`); anything else (or `--lane intake`) a steady load on the live lane
 * (`capacity.ts`). One command, two questions: what a rate costs, and what a batch takes.
 */
import { UsageError } from "../args.ts";
import type { OneShotCommand } from "../command.ts";
import { capacityCommand as rateCommand, capacityUsage as rateUsage } from "./capacity.ts";
import { batchCapacityCommand, batchCapacityUsage } from "./capacity-batch.ts";

type RateOptions = Parameters<typeof rateCommand.run>[0];
type RateRun = Awaited<ReturnType<typeof rateCommand.run>>;
type BatchOptions = Parameters<typeof batchCapacityCommand.run>[0];
type BatchRun = Awaited<ReturnType<typeof batchCapacityCommand.run>>;

/** Options of either lane. */
type LaneOptions =
  | { readonly lane: "intake"; readonly options: RateOptions }
  | { readonly lane: "batch"; readonly options: BatchOptions };

/** A run of either lane. */
type LaneRun =
  | { readonly lane: "intake"; readonly run: RateRun }
  | { readonly lane: "batch"; readonly run: BatchRun };

/** The usage text of `decide capacity`: both lanes. */
export const capacityUsage = `${rateUsage}\n\n${batchCapacityUsage}`;

/** The lane `--lane` names (`--lane X` or `--lane=X`); the live intake when absent. */
function laneOf(argv: readonly string[]): { lane: "intake" | "batch"; rest: string[] } {
  const rest: string[] = [];
  let lane: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === "--lane") lane = argv[++i];
    else if (arg.startsWith("--lane=")) lane = arg.slice("--lane=".length);
    else rest.push(arg);
  }
  if (lane !== undefined && lane !== "batch" && lane !== "intake")
    throw new UsageError(`--lane must be batch or intake, got "${lane}"`);
  return { lane: lane === "batch" ? "batch" : "intake", rest };
}

/** `decide capacity`: parse by lane, run, print. */
export const capacityCommand: OneShotCommand<LaneOptions, LaneRun> = {
  parse(argv, env) {
    const { lane, rest } = laneOf(argv);
    return lane === "batch"
      ? { lane, options: batchCapacityCommand.parse(["--lane", "batch", ...rest], env) }
      : { lane, options: rateCommand.parse(rest, env) };
  },
  async run(options, io) {
    return options.lane === "batch"
      ? { lane: "batch", run: await batchCapacityCommand.run(options.options, io) }
      : { lane: "intake", run: await rateCommand.run(options.options, io) };
  },
  print(result, options) {
    if (result.lane === "batch" && options.lane === "batch")
      return batchCapacityCommand.print(result.run, options.options);
    if (result.lane === "intake" && options.lane === "intake")
      return rateCommand.print(result.run, options.options);
    throw new Error("a run of one lane printed with the options of the other");
  },
};
