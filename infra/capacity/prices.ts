/**
 * The prices `npm run bench:cost` and `decide what-if` turn measured times into money with:
 * assumptions, in one place.
 * On-demand list prices for us-east-1 as we read them in November 2026; check the SageMaker
 * pricing page for your region and date, and edit here. Compute per physical core is assumed
 * equal to the 2-core machine the benchmark ran on (a c6i vCPU is one hyper-thread: 2 vCPUs make
 * one physical core).
 */

/** A real-time instance: its hourly price and its physical cores. */
export interface RealtimeInstance {
  readonly name: string;
  readonly dollarsPerHour: number;
  readonly physicalCores: number;
}

/** Real-time CPU instances (SageMaker hosting, on demand). */
export const REALTIME_INSTANCES: readonly RealtimeInstance[] = [
  { name: "ml.c6i.large", dollarsPerHour: 0.119, physicalCores: 1 },
  { name: "ml.c6i.xlarge", dollarsPerHour: 0.238, physicalCores: 2 },
  { name: "ml.c6i.2xlarge", dollarsPerHour: 0.476, physicalCores: 4 },
];

/** Serverless Inference: price per GB-second of memory, and per GB of data in and out. */
export const SERVERLESS = {
  dollarsPerGbSecond: 0.00002,
  dollarsPerGbProcessed: 0.016,
  /**
   * The compute a memory size gets is not published; we assume 6 GB and 4 GB match the 2 cores
   * measured here and 2 GB has half of it (its decisions take twice as long). A serverless run
   * of `npm run bench:endpoint` against the real endpoint replaces this with a measurement.
   */
  memorySizes: [
    { memoryMiB: 2048, speedVsBench: 0.5 },
    { memoryMiB: 4096, speedVsBench: 1 },
    { memoryMiB: 6144, speedVsBench: 1 },
  ],
  /** Request plus response of one decision (System One JSON), in bytes. */
  bytesPerDecision: 3000,
} as const;

/** Hours in a month, for idle cost. */
export const HOURS_PER_MONTH = 730;

/**
 * GPU instances, with the GPU each carries: the capacity model takes one only where
 * `npm run bench:gpu` measured that GPU (`gpu-times.json`), and refuses it rather than guess a speed.
 */
export const GPU_INSTANCES: readonly {
  readonly name: string;
  readonly dollarsPerHour: number;
  readonly gpu: string;
}[] = [{ name: "ml.g5.xlarge", dollarsPerHour: 1.408, gpu: "NVIDIA A10G" }];

/** Lambda on arm64 (the decide function's architecture): per GB-second and per million requests. */
export const LAMBDA = { dollarsPerGbSecond: 0.0000133334, dollarsPerMillionRequests: 0.2 } as const;

/** Seconds in the month {@link HOURS_PER_MONTH} makes. */
export const SECONDS_PER_MONTH = HOURS_PER_MONTH * 3600;
