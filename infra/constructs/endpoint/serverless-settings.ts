/**
 * Serverless Inference's settings for the decision endpoint, checked against the limits AWS
 * documents (memory 1 to 6 GB in 1 GB steps, concurrency 1 to 200, CPU only), so a wrong value
 * fails at synth naming itself instead of at deploy.
 */
import { isGpuInstance } from "./instance-types.ts";

/** Serverless Inference's documented limits. */
export const SERVERLESS_LIMITS = {
  memoryMiB: [1024, 2048, 3072, 4096, 5120, 6144],
  maxConcurrency: 200,
  payloadBytes: 4 * 1024 * 1024,
  invocationSeconds: 60,
  pingSeconds: 180,
} as const;

/** Serverless settings: memory (which also sets the vCPUs SageMaker gives) and concurrency. */
export interface ServerlessSettings {
  /** 1024 to 6144 in steps of 1024. @default 4096 */
  readonly memoryMiB?: number;
  /** Concurrent invocations, 1 to 200. @default 5 */
  readonly maxConcurrency?: number;
  /** Instances kept warm (billed while provisioned), at most maxConcurrency. @default none */
  readonly provisionedConcurrency?: number;
}

/** Checks serverless settings against the documented limits; throws naming the value at fault. */
export function checkServerlessSettings(
  settings: ServerlessSettings,
  instanceType?: string,
): Required<Omit<ServerlessSettings, "provisionedConcurrency">> &
  Pick<ServerlessSettings, "provisionedConcurrency"> {
  const memoryMiB = settings.memoryMiB ?? 4096;
  const maxConcurrency = settings.maxConcurrency ?? 5;
  if (!(SERVERLESS_LIMITS.memoryMiB as readonly number[]).includes(memoryMiB))
    throw new Error(
      `serverlessMemoryMiB must be one of ${SERVERLESS_LIMITS.memoryMiB.join(", ")}, got ${memoryMiB}`,
    );
  if (
    !Number.isInteger(maxConcurrency) ||
    maxConcurrency < 1 ||
    maxConcurrency > SERVERLESS_LIMITS.maxConcurrency
  )
    throw new Error(`serverlessMaxConcurrency must be an integer from 1 to 200, got ${maxConcurrency}`);
  const provisioned = settings.provisionedConcurrency;
  if (
    provisioned !== undefined &&
    (!Number.isInteger(provisioned) || provisioned < 1 || provisioned > maxConcurrency)
  )
    throw new Error(
      `serverlessProvisionedConcurrency must be an integer from 1 to ${maxConcurrency}, got ${provisioned}`,
    );
  if (instanceType && isGpuInstance(instanceType))
    throw new Error(
      `serverless endpoints run on CPU only: drop instanceType ${instanceType} or use endpointMode=realtime`,
    );
  return {
    memoryMiB,
    maxConcurrency,
    ...(provisioned !== undefined ? { provisionedConcurrency: provisioned } : {}),
  };
}
