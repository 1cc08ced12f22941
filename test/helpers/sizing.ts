/**
 * The overload-relevant numbers of a synthesized template, read resource by resource (as the
 * capacity model and an architect read them): the decide function's two event source mappings,
 * its per-call timeout, the endpoint's instances or serverless concurrency, and the container's
 * admission queue and deadline.
 */
import type { Template } from "aws-cdk-lib/assertions";
import { expect } from "vitest";
import { MEASURED_SECONDS_PER_ITEM, SIZING_MARGIN } from "../../shared/domain/topology.ts";

type Resource = { Type: string; Properties: Record<string, unknown> };

/** What a template says about the decide path's load on the endpoint. */
export interface TemplateSizing {
  readonly intake: { readonly concurrency: number; readonly batchSize: number };
  /** The decide function's batch lane; 0 and 0 when the async lane reads the batch queue. */
  readonly batch: { readonly concurrency: number; readonly batchSize: number };
  /** Instances at the scaling minimum (real-time), or the serverless MaxConcurrency. */
  readonly instances: number;
  readonly serverless: boolean;
  readonly queueSize: number;
  readonly deadlineMs: number;
  /** The decide function's per-call timeout. */
  readonly clientTimeoutMs: number;
}

/** Reads the sizing from `template`; throws naming what is missing. */
export function templateSizing(template: Template): TemplateSizing {
  const resources = Object.values(template.toJSON().Resources as Record<string, Resource>);
  const ofType = (type: string) => resources.filter((r) => r.Type === type);
  // The decide function's mappings only: on the async lane another function reads the batch queue.
  const decideId = Object.entries(template.toJSON().Resources as Record<string, Resource>).find(
    ([, r]) =>
      r.Type === "AWS::Lambda::Function" &&
      (r.Properties.Environment as { Variables?: Record<string, unknown> })?.Variables?.ENDPOINT_TIMEOUT_MS,
  )?.[0];
  const mapping = (queue: string, required = true) => {
    const found = ofType("AWS::Lambda::EventSourceMapping").find(
      (m) =>
        JSON.stringify(m.Properties.EventSourceArn).includes(queue) &&
        JSON.stringify(m.Properties.FunctionName).includes(`"${decideId}"`),
    );
    if (!found) {
      if (!required) return { concurrency: 0, batchSize: 0 };
      throw new Error(`no event source mapping of the decide function on ${queue}`);
    }
    const scaling = found.Properties.ScalingConfig as { MaximumConcurrency: number };
    return { concurrency: scaling.MaximumConcurrency, batchSize: Number(found.Properties.BatchSize) };
  };
  const variant = (
    ofType("AWS::SageMaker::EndpointConfig")[0]!.Properties.ProductionVariants as {
      InitialInstanceCount?: number;
      ServerlessConfig?: { MaxConcurrency: number };
    }[]
  )[0]!;
  const container = (ofType("AWS::SageMaker::Model")[0]!.Properties.PrimaryContainer as {
    Environment: Record<string, string>;
  })!.Environment;
  const decide = ofType("AWS::Lambda::Function").find(
    (f) =>
      (f.Properties.Environment as { Variables?: Record<string, unknown> })?.Variables?.ENDPOINT_TIMEOUT_MS,
  );
  if (!decide) throw new Error("no function with ENDPOINT_TIMEOUT_MS");
  return {
    intake: mapping("IntakeQueue"),
    // Absent on the async lane (-c batchLane=async): the batch queue puts no load on this endpoint.
    batch: mapping("BatchQueue", false),
    instances: variant.ServerlessConfig?.MaxConcurrency ?? variant.InitialInstanceCount!,
    serverless: variant.ServerlessConfig !== undefined,
    queueSize: Number(container.DECIDE_QUEUE_SIZE),
    deadlineMs: Number(container.DECIDE_DEADLINE_MS),
    clientTimeoutMs: Number(
      (decide.Properties.Environment as { Variables: Record<string, string> }).Variables.ENDPOINT_TIMEOUT_MS,
    ),
  };
}

/**
 * The numbers fit at the minimum capacity: the items an instance admits (the call it runs and the
 * calls its admission queue holds) are served within the container's deadline (measured seconds
 * per item, with the margin), the deadline ends before the client's timeout and SageMaker's 60 s,
 * and on a serverless endpoint every call has an instance of its own. What an instance cannot
 * admit is refused at once and waits in its queue.
 */
export function expectSizingFits(sizing: TemplateSizing): void {
  const calls = sizing.intake.concurrency + sizing.batch.concurrency;
  const admittedCalls = sizing.serverless ? 1 : sizing.queueSize + 1;
  const itemsAdmitted = admittedCalls * Math.max(sizing.intake.batchSize, sizing.batch.batchSize);
  const seconds = itemsAdmitted * MEASURED_SECONDS_PER_ITEM.fresh * SIZING_MARGIN;
  expect(seconds, JSON.stringify(sizing)).toBeLessThan(sizing.deadlineMs / 1000);
  expect(sizing.deadlineMs).toBeLessThan(sizing.clientTimeoutMs);
  expect(sizing.clientTimeoutMs).toBeLessThan(60_000);
  if (sizing.serverless) expect(calls).toBeLessThanOrEqual(sizing.instances);
}
