/**
 * The fewest instances that keep up with a steady rate: the search `npm run sizing` prints a
 * table of and `decide capacity` suggests from, so the two give one answer. Each candidate count
 * is held fixed (minimum and maximum both, with what the stack derives from them) for a steady
 * load; it keeps up when nothing is dead-lettered and less than half a minute of arrivals waits
 * at the end.
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

/**
 * The fewest instances that keep up, searched between full utilization and four times that; when
 * even that many do not, the largest tried, with `keptUp` false.
 */
export function sizeFleet(question: SizingQuestion): { run: FixedRun | undefined; keptUp: boolean } {
  const busy = question.ratePerSecond * question.secondsPerItem;
  let low = Math.max(1, Math.ceil(busy));
  let high = Math.max(low + 2, Math.ceil(busy * 4));
  let best = fixedRun(question, high);
  if (!keptUp(question.ratePerSecond, best)) return { run: best, keptUp: false };
  while (low < high) {
    const mid = Math.floor((low + high) / 2);
    const run = fixedRun(question, mid);
    if (keptUp(question.ratePerSecond, run)) {
      high = mid;
      best = run;
    } else low = mid + 1;
  }
  return { run: best, keptUp: true };
}
