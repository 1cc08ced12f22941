/**
 * The per-item times `npm run bench:cost` measured (written by it to `measured-times.json`), and
 * what they mean on another instance: decision time scales with physical cores against the
 * machine measured (an assumption `prices.ts` states); serverless memory sizes get the speed
 * `prices.ts` assumes for them. A GPU, or a type with no price, has no figure: an error says so.
 */

import measured from "../../shared/domain/topology/measured-times.json" with { type: "json" };
import { UnknownCapacityError } from "./errors.ts";
import { GPU_INSTANCES, REALTIME_INSTANCES, SERVERLESS } from "./prices.ts";

/** The measured figures. */
export interface MeasuredTimes {
  /** How, when and where they were measured. */
  readonly source: string;
  readonly referenceInstance: string;
  readonly referencePhysicalCores: number;
  readonly quantization: string;
  /** Seconds per item: a fresh ~200-token decision, and one under a cached ~300-token preamble. */
  readonly secondsPerItem: { readonly fresh: number; readonly preambleCached: number };
}

/** The figures in `measured-times.json`. */
export const MEASURED_TIMES: MeasuredTimes = measured;

/** Where `npm run bench:cost` writes the figures, relative to the repository root. */
export const MEASURED_TIMES_PATH = "shared/domain/topology/measured-times.json";

/** The file's text for `times` (what `npm run bench:cost` writes), seconds to the millisecond. */
export function measuredTimesJson(times: MeasuredTimes): string {
  const ms = (s: number) => Math.round(s * 1000) / 1000;
  for (const [name, value] of Object.entries(times.secondsPerItem))
    if (!(value > 0)) throw new RangeError(`seconds per item (${name}) must be positive, got ${value}`);
  const file: MeasuredTimes = {
    ...times,
    secondsPerItem: {
      fresh: ms(times.secondsPerItem.fresh),
      preambleCached: ms(times.secondsPerItem.preambleCached),
    },
  };
  return `${JSON.stringify(file, null, 2)}\n`;
}

/** Which workload: fresh items, or items under a policy preamble the instance has cached. */
export type Workload = "fresh" | "preambleCached";

/**
 * What a cascade adds to an endpoint's work: the share of items the first model passes on to a
 * second model served by the same instances, and that model's time per item as a multiple of the
 * first's (a 1.5B model behind a 0.5B one is about 3; the demo's `demo-large` measured 4.2,
 * `npm run bench:cascade`).
 */
export interface SecondModelLoad {
  readonly share: number;
  readonly ratio: number;
}

/** Seconds per item with a cascade's second model: every item pays the first model, `share` of them the second too. */
export function withSecondModel(secondsPerItem: number, second: SecondModelLoad | undefined): number {
  return second ? secondsPerItem * (1 + second.share * second.ratio) : secondsPerItem;
}

/** Seconds per item on a real-time `instanceType`. */
export function instanceSecondsPerItem(
  instanceType: string,
  workload: Workload,
  times: MeasuredTimes = MEASURED_TIMES,
): number {
  const instance = REALTIME_INSTANCES.find((i) => i.name === instanceType);
  if (!instance) {
    const gpu = GPU_INSTANCES.some((g) => g.name === instanceType);
    throw new UnknownCapacityError(
      instanceType,
      gpu
        ? `${instanceType} is a GPU instance: no decision time was measured on one, so the capacity model has no figure for it`
        : `no price or core count for ${instanceType} in infra/capacity/prices.ts (known: ${REALTIME_INSTANCES.map((i) => i.name).join(", ")})`,
    );
  }
  return (times.secondsPerItem[workload] * times.referencePhysicalCores) / instance.physicalCores;
}

/** Seconds per item on a serverless endpoint of `memoryMiB`. */
export function serverlessSecondsPerItem(
  memoryMiB: number,
  workload: Workload,
  times: MeasuredTimes = MEASURED_TIMES,
): number {
  const size = SERVERLESS.memorySizes.find((s) => s.memoryMiB === memoryMiB);
  if (!size)
    throw new UnknownCapacityError(
      `serverless ${memoryMiB} MB`,
      `no assumed speed for serverless ${memoryMiB} MB in infra/capacity/prices.ts (known: ${SERVERLESS.memorySizes.map((s) => s.memoryMiB).join(", ")})`,
    );
  return times.secondsPerItem[workload] / size.speedVsBench;
}
