/**
 * The overload-relevant numbers of a synthesized template, read resource by resource (as the
 * capacity model and an architect read them): the decide function's two event source mappings,
 * its per-call timeout, the endpoint's instances or serverless concurrency, and the container's
 * admission queue and deadline.
 */
import type { Template } from "aws-cdk-lib/assertions";

type Resource = { Type: string; Properties: Record<string, unknown> };

/** What a template says about the decide path's load on the endpoint. */
export interface TemplateSizing {
  readonly intake: { readonly concurrency: number; readonly batchSize: number };
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
  const mapping = (queue: string) => {
    const found = ofType("AWS::Lambda::EventSourceMapping").find((m) =>
      JSON.stringify(m.Properties.EventSourceArn).includes(queue),
    );
    if (!found) throw new Error(`no event source mapping on ${queue}`);
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
    batch: mapping("BatchQueue"),
    instances: variant.ServerlessConfig?.MaxConcurrency ?? variant.InitialInstanceCount!,
    serverless: variant.ServerlessConfig !== undefined,
    queueSize: Number(container.DECIDE_QUEUE_SIZE),
    deadlineMs: Number(container.DECIDE_DEADLINE_MS),
    clientTimeoutMs: Number(
      (decide.Properties.Environment as { Variables: Record<string, string> }).Variables.ENDPOINT_TIMEOUT_MS,
    ),
  };
}
