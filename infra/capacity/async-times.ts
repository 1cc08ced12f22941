/**
 * Seconds per item on the async endpoint's instance type, fresh and under the object's cached
 * preamble: a CPU type scales the measured figures (`measured-times.ts`); a GPU type takes the
 * figures `npm run bench:gpu` measured on that GPU (`gpu-times.json`), and is refused while its GPU
 * has none. The price per hour comes from `prices.ts` either way.
 */
import { UnknownCapacityError } from "./errors.ts";
import gpuTimes from "./gpu-times.json" with { type: "json" };
import { instanceSecondsPerItem } from "./measured-times.ts";
import { GPU_INSTANCES, REALTIME_INSTANCES } from "./prices.ts";

/** One GPU's measured figures, as `npm run bench:gpu` writes them. */
export interface GpuTimes {
  readonly source: string;
  readonly secondsPerItem: { readonly fresh: number; readonly preambleCached: number };
}

/** The GPU figures file: how it was made, and the figures by GPU name (empty until measured). */
export interface GpuTimesFile {
  readonly source: string;
  readonly gpus: Readonly<Record<string, GpuTimes>>;
}

/** The figures in `gpu-times.json`. */
export const GPU_TIMES: GpuTimesFile = gpuTimes;

/** Where `npm run bench:gpu` writes them, relative to the repository root. */
export const GPU_TIMES_PATH = "infra/capacity/gpu-times.json";

/** The instance type's seconds per item and price per hour. */
export function asyncInstanceFigures(
  instanceType: string,
  gpus: GpuTimesFile = GPU_TIMES,
): { secondsPerItem: { fresh: number; preambleCached: number }; dollarsPerHour: number; measuredOn: string } {
  const gpu = GPU_INSTANCES.find((g) => g.name === instanceType);
  if (gpu) {
    const times = gpus.gpus[gpu.gpu];
    if (!times)
      throw new UnknownCapacityError(
        instanceType,
        `${instanceType} carries an ${gpu.gpu}, on which no decision time was measured (measured: ${Object.keys(gpus.gpus).join(", ") || "no GPU"}; run npm run bench:gpu on one)`,
      );
    return {
      secondsPerItem: times.secondsPerItem,
      dollarsPerHour: gpu.dollarsPerHour,
      measuredOn: times.source,
    };
  }
  const cpu = REALTIME_INSTANCES.find((i) => i.name === instanceType);
  const secondsPerItem = {
    fresh: instanceSecondsPerItem(instanceType, "fresh"),
    preambleCached: instanceSecondsPerItem(instanceType, "preambleCached"),
  };
  return {
    secondsPerItem,
    dollarsPerHour: cpu!.dollarsPerHour,
    measuredOn: "npm run bench:cost (scaled by physical cores)",
  };
}
