/**
 * What-ifs on a template's shape, as a deploy with other context values would make it: another
 * instance type, another scaling maximum. A new maximum re-derives what the stack derives from it
 * (the event source concurrency and batch size, and the container's admission where the topology
 * derives it) through the topology's own functions, so the model sees what `-c maxInstanceCount`
 * would deploy.
 */

import type { EndpointProvisioning } from "../topology.ts";
import * as topology from "../topology.ts";
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

/** The shape with a scaling maximum of `maxInstances`, and what the stack derives from it. */
export function withMaxInstances(shape: PipelineShape, maxInstances: number): Overridden {
  const e = shape.endpoint;
  if (e.mode !== "realtime")
    throw new RangeError("--max-instances applies to a real-time endpoint; this template's is serverless");
  if (maxInstances < e.minInstances)
    throw new RangeError(
      `--max-instances ${maxInstances} is below the template's minimum of ${e.minInstances}`,
    );
  const provisioning: EndpointProvisioning = { mode: "realtime", minInstances: e.minInstances, maxInstances };
  const derived = topology.decideConcurrency(provisioning) as { intake: number; batchSize?: number };
  // Newer topologies also derive the container's admission from the provisioning.
  const admission = (
    topology as unknown as {
      endpointAdmission?: (p: EndpointProvisioning) => { queueSize: number; deadlineMs: number };
    }
  ).endpointAdmission?.(provisioning);
  const next: PipelineShape = {
    ...shape,
    endpoint: {
      ...e,
      maxInstances,
      ...(admission ? { queueSize: admission.queueSize, deadlineSeconds: admission.deadlineMs / 1000 } : {}),
    },
    intake: {
      ...shape.intake,
      maxConcurrency: derived.intake,
      ...(derived.batchSize ? { batchSize: derived.batchSize } : {}),
    },
  };
  const notes = [`max instances ${e.maxInstances} → ${maxInstances}`];
  const change = (what: string, from: unknown, to: unknown) => {
    if (from !== to) notes.push(`${what} ${String(from)} → ${String(to)}`);
  };
  change("intake MaximumConcurrency", shape.intake.maxConcurrency, next.intake.maxConcurrency);
  change("intake batch size", shape.intake.batchSize, next.intake.batchSize);
  change("container queue", e.queueSize, next.endpoint.queueSize);
  change("container deadline (s)", e.deadlineSeconds, next.endpoint.deadlineSeconds);
  return { shape: next, notes };
}
