/**
 * The fewest instances that keep up with a steady rate: the search `npm run sizing` prints a
 * table of and `decide capacity` suggests from, so the two give one answer. Each candidate count
 * is held fixed (minimum and maximum both, with what the stack derives from them) for a steady
 * load; it keeps up when nothing is dead-lettered and less than half a minute of arrivals waits
 * at the end, and answers in time when its p99 is within {@link TAIL_BAR} times the best p99 of
 * the rate: an ideal router (`least-outstanding-exact`) on four times the busy count. Keeping up
 * alone let the count sit at the knee (at 10 fresh items/s and 1.502 s an item, 17 instances:
 * p99 70 s, 2.5 times the ideal router's on the same 17).
 */
import { withInstanceCounts } from "./overrides.ts";
import type { SimulationResult } from "./result.ts";
import type { PipelineShape } from "./shape.ts";
import { simulate } from "./simulate.ts";

/** A steady run on a fixed fleet. */
export interface FixedRun {
  readonly instances: number;
  readonly shape: PipelineShape;
  readonly result: SimulationResult;
}

/** How far the count's p99 may be from the best p99 of the rate (issue 32's bar: within 2x). */
export const TAIL_BAR = 2;

/** What a search is run on. */
export interface SizingQuestion {
  /** The template's shape (its instance type and routing as asked). */
  readonly base: PipelineShape;
  readonly ratePerSecond: number;
  readonly secondsPerItem: number;
  readonly durationSeconds: number;
  /** @default 1 */
  readonly seed?: number;
}

/** `instances` fixed instances at the question's rate; undefined when the stack cannot be derived for them. */
export function fixedRun(question: SizingQuestion, instances: number): FixedRun | undefined {
  let shape: PipelineShape;
  try {
    shape = withInstanceCounts(question.base, { minInstances: instances, maxInstances: instances }).shape;
  } catch {
    return undefined;
  }
  const result = simulate({
    shape: { ...shape, policies: [] },
    load: { ratePerSecond: question.ratePerSecond, durationSeconds: question.durationSeconds },
    secondsPerItem: question.secondsPerItem,
    seed: question.seed ?? 1,
  });
  return { instances, shape, result };
}

/** Whether a run kept up: nothing dead-lettered, under half a minute of arrivals (at least 20) waiting. */
export function keptUp(rate: number, run: FixedRun | undefined): run is FixedRun {
  return run !== undefined && run.result.deadLettered === 0 && run.result.waiting <= Math.max(20, rate * 30);
}

/** The best p99 at the question's rate: an ideal router on `instances`, far more than are busy. */
function bestP99(question: SizingQuestion, instances: number): number | undefined {
  const ideal = { ...question.base.endpoint, routing: "least-outstanding-exact" as const };
  return fixedRun({ ...question, base: { ...question.base, endpoint: ideal } }, instances)?.result.p99Seconds;
}

/** What a search found: the run at the count, whether it kept up, and the best p99 it was held to. */
interface SizedFleet {
  readonly run: FixedRun | undefined;
  readonly keptUp: boolean;
  /** The best p99 of the rate ({@link bestP99}); the count's p99 is within {@link TAIL_BAR} times it. */
  readonly bestP99Seconds?: number;
  /** The fewest instances that keep up, tail aside (what the search gave before the tail bar). */
  readonly keepingUpInstances?: number;
}

/**
 * The fewest instances that keep up and answer within {@link TAIL_BAR} times the best p99,
 * searched between full utilization and four times that; when even that many do not keep up, the
 * largest tried, with `keptUp` false (when they keep up but miss the tail bar, the fewest that
 * keep up, without `bestP99Seconds`). `keepingUpInstances` says how many keep up, tail aside.
 */
export function sizeFleet(question: SizingQuestion): SizedFleet {
  const rate = question.ratePerSecond;
  const busy = rate * question.secondsPerItem;
  const low = Math.max(1, Math.ceil(busy));
  const high = Math.max(low + 2, Math.ceil(busy * 4));
  const top = fixedRun(question, high);
  if (!keptUp(rate, top)) return { run: top, keptUp: false };
  const best = bestP99(question, high);
  const inTime = (run: FixedRun | undefined) =>
    keptUp(rate, run) && best !== undefined && run.result.p99Seconds <= TAIL_BAR * best;
  const keeping = fewest(question, low, high, top, (run) => keptUp(rate, run));
  if (best === undefined || !inTime(top)) return { run: keeping, keptUp: true };
  // Answering in time implies keeping up: the search starts at the count that keeps up.
  const timely = fewest(question, keeping.instances, high, top, inTime);
  return { run: timely, keptUp: true, bestP99Seconds: best, keepingUpInstances: keeping.instances };
}

/** The fewest instances in [low, high] whose run passes `ok` (the run at `high`, `top`, does). */
function fewest(
  question: SizingQuestion,
  low: number,
  high: number,
  top: FixedRun,
  ok: (run: FixedRun | undefined) => boolean,
): FixedRun {
  let found = top;
  let [from, to] = [low, high];
  while (from < to) {
    const mid = Math.floor((from + to) / 2);
    const run = fixedRun(question, mid);
    if (ok(run)) {
      to = mid;
      found = run!;
    } else from = mid + 1;
  }
  return found;
}
