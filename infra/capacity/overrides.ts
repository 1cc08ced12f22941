/**
 * What-ifs on a template's shape, as a deploy with other context values would make it: another
 * instance type, other scaling bounds. New bounds re-derive what the stack derives from them
 * (the event source concurrency and batch size, and the container's admission) through the
 * capacity plan the CDK app uses, so the model sees what `-c maxInstanceCount` would deploy.
 */
import { capacityPlan } from "../../shared/domain/capacity-plan.ts";
import type { PipelineShape } from "./shape.ts";

/** A changed shape and one line per value that changed. */
export interface Overridden {
  readonly shape: PipelineShape;
  readonly notes: string[];
}

/** The shape with real-time instances of `instanceType`. */
export function withInstanceType(shape: PipelineShape, instanceType: string): Overridden {
  if (shape.endpoint.mode !== "realtime")
    throw new RangeError("--instance-type applies to a real-time endpoint; this template's is serverless");
  return {
    shape: { ...shape, endpoint: { ...shape.endpoint, instanceType } },
    notes: [`instance type ${shape.endpoint.instanceType} → ${instanceType}`],
  };
}

/**
 * The shape with other scaling bounds (either may stay as it is), and what the stack derives from
 * them. The endpoint starts at the new minimum when that is above its initial count.
 */
export function withInstanceCounts(
  shape: PipelineShape,
  counts: { readonly minInstances?: number; readonly maxInstances?: number },
): Overridden {
  const e = shape.endpoint;
  if (e.mode !== "realtime")
    throw new RangeError("instance counts apply to a real-time endpoint; this template's is serverless");
  const minInstances = counts.minInstances ?? e.minInstances;
  const maxInstances = counts.maxInstances ?? e.maxInstances;
  if (maxInstances < minInstances)
    throw new RangeError(`the maximum of ${maxInstances} instances is below the minimum of ${minInstances}`);
  const plan = capacityPlan({ mode: "realtime", minInstances, maxInstances });
  const next: PipelineShape = {
    ...shape,
    endpoint: {
      ...e,
      minInstances,
      maxInstances,
      initialInstances: Math.max(e.initialInstances, minInstances),
      queueSize: plan.queueSize,
      deadlineSeconds: plan.deadlineMs / 1000,
    },
    intake: {
      ...shape.intake,
      maxConcurrency: plan.intake,
      batchSize: plan.batchSize,
    },
  };
  const notes: string[] = [];
  const change = (what: string, from: unknown, to: unknown) => {
    if (from !== to) notes.push(`${what} ${String(from)} → ${String(to)}`);
  };
  change("min instances", e.minInstances, minInstances);
  change("max instances", e.maxInstances, maxInstances);
  change("intake MaximumConcurrency", shape.intake.maxConcurrency, next.intake.maxConcurrency);
  change("intake batch size", shape.intake.batchSize, next.intake.batchSize);
  change("container queue", e.queueSize, next.endpoint.queueSize);
  change("container deadline (s)", e.deadlineSeconds, next.endpoint.deadlineSeconds);
  return { shape: next, notes };
}
