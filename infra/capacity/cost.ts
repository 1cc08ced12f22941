/**
 * What a simulated run costs, from what it used: endpoint instance-hours (or serverless
 * GB-seconds) and the decide function's GB-seconds and requests, at the prices in `prices.ts`.
 * SQS, DynamoDB and EventBridge are left out (cents per 1,000 items at these volumes).
 */
import { UnknownCapacityError } from "./errors.ts";
import { LAMBDA, REALTIME_INSTANCES, SECONDS_PER_MONTH, SERVERLESS } from "./prices.ts";
import type { Usage } from "./result.ts";
import type { PipelineShape } from "./shape.ts";

/** Dollars for the run, per 1,000 items decided (undefined when none were), and per month at this rate. */
export interface RunCost {
  readonly dollars: number;
  readonly perThousand: number | undefined;
  readonly perMonth: number;
}

/** Prices `usage` for the pipeline `shape`. */
export function costOf(shape: PipelineShape, usage: Usage, decided: number): RunCost {
  const endpoint = shape.endpoint;
  let dollars: number;
  if (endpoint.mode === "realtime") {
    const instance = REALTIME_INSTANCES.find((i) => i.name === endpoint.instanceType);
    if (!instance)
      throw new UnknownCapacityError(String(endpoint.instanceType), `no price for ${endpoint.instanceType}`);
    dollars = (usage.instanceSeconds / 3600) * instance.dollarsPerHour;
  } else {
    const gb = (endpoint.serverless?.memoryMiB ?? 0) / 1024;
    dollars = usage.serverlessBusySeconds * gb * SERVERLESS.dollarsPerGbSecond;
  }
  dollars +=
    usage.lambdaSeconds * (shape.decide.memoryMiB / 1024) * LAMBDA.dollarsPerGbSecond +
    (usage.lambdaRuns / 1e6) * LAMBDA.dollarsPerMillionRequests;
  return {
    dollars,
    perThousand: decided > 0 ? (dollars / decided) * 1000 : undefined,
    perMonth: usage.seconds > 0 ? (dollars / usage.seconds) * SECONDS_PER_MONTH : 0,
  };
}
