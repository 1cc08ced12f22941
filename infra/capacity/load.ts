/**
 * The offered load: Poisson arrivals at a steady rate, optionally multiplied for a while (a
 * burst, or a step when it lasts to the end), drawn from a seeded generator so a run repeats.
 */
import type { SeededRandom } from "../../shared/domain/random.ts";

/** A burst: the rate times `factor` from `startSeconds` for `durationSeconds`. */
export interface Burst {
  readonly factor: number;
  readonly startSeconds: number;
  readonly durationSeconds: number;
}

/** What arrives: items per second for a duration, with an optional burst. */
export interface LoadProfile {
  readonly ratePerSecond: number;
  readonly durationSeconds: number;
  readonly burst?: Burst;
}

/** Most arrivals one run may draw (memory: 8 bytes per arrival, a few more per item). */
export const MAX_ARRIVALS = 20_000_000;

/** The rate at time `t`. */
export function rateAt(load: LoadProfile, t: number): number {
  const b = load.burst;
  return b && t >= b.startSeconds && t < b.startSeconds + b.durationSeconds
    ? load.ratePerSecond * b.factor
    : load.ratePerSecond;
}

/** Items expected over the whole profile. */
export function expectedArrivals(load: LoadProfile): number {
  const b = load.burst;
  const extra = b
    ? Math.max(0, Math.min(b.startSeconds + b.durationSeconds, load.durationSeconds) - b.startSeconds) *
      load.ratePerSecond *
      (b.factor - 1)
    : 0;
  return load.ratePerSecond * load.durationSeconds + extra;
}

/** Arrival times in seconds, ascending: a Poisson process whose rate follows the profile. */
export function arrivalTimes(load: LoadProfile, random: SeededRandom): Float64Array {
  const expected = expectedArrivals(load);
  if (expected > MAX_ARRIVALS)
    throw new RangeError(
      `the load brings about ${Math.round(expected).toLocaleString("en")} items, more than the ${MAX_ARRIVALS.toLocaleString("en")} one run simulates: shorten it or lower the rate`,
    );
  let out = new Float64Array(Math.ceil(expected + 10 * Math.sqrt(expected + 1) + 16));
  let count = 0;
  const edges = [load.burst?.startSeconds, load.burst && load.burst.startSeconds + load.burst.durationSeconds]
    .filter((x): x is number => x !== undefined && x > 0 && x < load.durationSeconds)
    .concat(load.durationSeconds);
  let t = 0;
  for (const edge of edges) {
    const rate = rateAt(load, t);
    // Memoryless: a segment's arrivals start afresh at its edge.
    while (rate > 0) {
      t += -Math.log(1 - random.nextFloat()) / rate;
      if (t >= edge) break;
      if (count === out.length) {
        const grown = new Float64Array(out.length * 2);
        grown.set(out);
        out = grown;
      }
      out[count++] = t;
    }
    t = edge;
  }
  return out.subarray(0, count);
}
