/**
 * Reads the capacity-relevant shape of the pipeline from a synthesized template: the decide
 * function (found by its `DECISION_ENDPOINT_NAME`), the endpoint it calls with its variant and
 * container, the scaling target and policies, and the function's SQS event source mappings with
 * their queues. Absent properties take the service's documented default; a value the model needs
 * and has no default for fails with an error naming the resource and the property.
 */
import { DECIDE_FUNCTION } from "../../../shared/domain/topology.ts";
import { liveLaneIsAsync } from "../async-template.ts";
import { AWS_BEHAVIOUR } from "../aws-behaviour.ts";
import { TemplateShapeError } from "../errors.ts";
import { overloadFor } from "../overload.ts";
import type { EndpointShape, FunctionShape, LaneShape, OverloadShape, PipelineShape } from "../shape.ts";
import {
  at,
  CfnTemplate,
  envNumber,
  numberAt,
  optionalNumberAt,
  referencedId,
  type TemplateResource,
} from "./template.ts";
import { readFollower } from "./template-follower.ts";
import { readScaling } from "./template-scaling.ts";

/** The container's own defaults, used where the template sets no environment variable for them. */
export interface ContainerDefaults {
  /** Requests allowed to wait (DECIDE_QUEUE_SIZE). */
  readonly queueSize: number;
  /** Per-request deadline in seconds (DECIDE_DEADLINE_MS). */
  readonly deadlineSeconds: number;
}

/** Options of {@link readPipelineShape}. */
export interface ReadOptions {
  /** The container's own defaults, for a template that leaves them unset. @default none: such a template is refused */
  readonly containerDefaults?: ContainerDefaults;
  /**
   * The decide function's overload handling for a template with this intake lane (it lives in
   * code, not the template). @default overloadFor (the topology's, when the template matches it)
   */
  readonly overload?: (intake: LaneShape) => OverloadShape | undefined;
  /** Whether the container's deadline counts per call or per item. @default "call" with overload handling, else "item" */
  readonly deadlineScope?: EndpointShape["deadlineScope"];
}

/** The pipeline's shape from a parsed template (`JSON.parse` of `cdk.out/<stack>.template.json`). */
export function readPipelineShape(json: unknown, options: ReadOptions = {}): PipelineShape {
  if (liveLaneIsAsync(json))
    throw new TemplateShapeError(
      "AWS::Lambda::Function",
      "Environment.Variables.DECISION_ENDPOINT_NAME",
      "no decide function: this stack runs the live lane on the async endpoint (-c endpointMode=async), idle $0 per month; simulate it with --lane batch --items N",
    );
  const template = new CfnTemplate(json);
  const fn = decideFunction(template);
  const environment = at(fn.properties, "Environment.Variables") as Record<string, unknown> | undefined;
  const endpointResource = endpointOf(template, fn, environment?.DECISION_ENDPOINT_NAME);
  const lanes = mappingsOf(template, fn);
  const endpoint = readEndpoint(template, endpointResource, options.containerDefaults);
  const scaling = readScaling(template, endpointResource, endpoint);
  const overload = (options.overload ?? ((intake) => overloadFor(intake)))(lanes.intake);
  // The code that handles overload also gives a batched call one deadline (one change); before
  // it, each item of a call had a deadline of its own, from when it began to wait.
  const deadlineScope = options.deadlineScope ?? (overload ? "call" : "item");
  return {
    endpoint: { ...endpoint, ...scaling.counts, deadlineScope },
    policies: scaling.policies,
    intake: lanes.intake,
    batch: lanes.batch,
    decide: readFunction(fn, environment),
    overload,
    follower: readFollower(template, lanes.intakeMappingId),
  };
}

/**
 * The endpoint the decide function calls: the one its DECISION_ENDPOINT_NAME references, or the
 * one of that literal name (a named endpoint), or the template's only endpoint.
 */
function endpointOf(template: CfnTemplate, fn: TemplateResource, name: unknown): TemplateResource {
  const id = referencedId(name);
  if (id) return template.get(id, "AWS::SageMaker::Endpoint", fn.id);
  const endpoints = template.ofType("AWS::SageMaker::Endpoint");
  const named = endpoints.filter((e) => typeof name === "string" && e.properties.EndpointName === name);
  const found = named.length === 1 ? named : endpoints;
  if (found.length !== 1)
    throw new TemplateShapeError(
      `AWS::Lambda::Function ${fn.id}`,
      "Environment.Variables.DECISION_ENDPOINT_NAME",
      `names no endpoint of this template (${JSON.stringify(name)?.slice(0, 80)}), and it has ${endpoints.length}`,
    );
  return found[0]!;
}

function decideFunction(template: CfnTemplate): TemplateResource {
  const found = template
    .ofType("AWS::Lambda::Function")
    .filter((f) => at(f.properties, "Environment.Variables.DECISION_ENDPOINT_NAME") !== undefined);
  if (found.length !== 1)
    throw new TemplateShapeError(
      "AWS::Lambda::Function",
      "Environment.Variables.DECISION_ENDPOINT_NAME",
      `expected exactly one function that calls the endpoint (the decide function), found ${found.length}`,
    );
  return found[0]!;
}

function readFunction(fn: TemplateResource, environment: Record<string, unknown> | undefined): FunctionShape {
  // Without the variables the function falls back on the topology (functions/support/config.ts).
  return {
    timeoutSeconds: numberAt(fn, "Timeout", AWS_BEHAVIOUR.lambda.defaultTimeoutSeconds),
    memoryMiB: numberAt(fn, "MemorySize", AWS_BEHAVIOUR.lambda.defaultMemoryMiB),
    reservedConcurrency: optionalNumberAt(fn, "ReservedConcurrentExecutions"),
    endpointTimeoutSeconds: envNumber(
      fn,
      environment,
      "ENDPOINT_TIMEOUT_MS",
      DECIDE_FUNCTION.endpointTimeoutMs / 1000,
      1e-3,
    ),
    endpointAttempts: envNumber(fn, environment, "ENDPOINT_ATTEMPTS", DECIDE_FUNCTION.endpointAttempts),
    endpointBatchItems: envNumber(
      fn,
      environment,
      "ENDPOINT_BATCH_ITEMS",
      DECIDE_FUNCTION.endpointBatchItems,
    ),
  };
}

function readEndpoint(
  template: CfnTemplate,
  endpoint: TemplateResource,
  defaults: ContainerDefaults | undefined,
): EndpointShape {
  const config = template.follow(
    endpoint,
    "EndpointConfigName",
    endpoint.properties.EndpointConfigName,
    "AWS::SageMaker::EndpointConfig",
  );
  const variants = config.properties.ProductionVariants;
  if (!Array.isArray(variants) || variants.length !== 1)
    throw new TemplateShapeError(
      `AWS::SageMaker::EndpointConfig ${config.id}`,
      "ProductionVariants",
      `the capacity model reads exactly one production variant, found ${Array.isArray(variants) ? variants.length : 0}`,
    );
  const variant = { ...config, properties: variants[0] as Record<string, unknown> };
  const model = template.follow(
    config,
    "ProductionVariants[0].ModelName",
    variant.properties.ModelName,
    "AWS::SageMaker::Model",
  );
  const container = (model.properties.PrimaryContainer ??
    (model.properties.Containers as unknown[] | undefined)?.[0]) as Record<string, unknown> | undefined;
  const env = container?.Environment as Record<string, unknown> | undefined;
  const serverless = variant.properties.ServerlessConfig as Record<string, unknown> | undefined;
  const routing = at(variant.properties, "RoutingConfig.RoutingStrategy");
  const common = {
    deadlineScope: "call",
    routing: routing === "LEAST_OUTSTANDING_REQUESTS" ? "least-outstanding" : "random",
    queueSize: envNumber(model, env, "DECIDE_QUEUE_SIZE", defaults?.queueSize),
    deadlineSeconds: envNumber(model, env, "DECIDE_DEADLINE_MS", defaults?.deadlineSeconds, 1e-3),
  } as const;
  if (serverless) {
    const maxConcurrency = numberAt(variant, "ServerlessConfig.MaxConcurrency");
    const provisioned = optionalNumberAt(variant, "ServerlessConfig.ProvisionedConcurrency") ?? 0;
    return {
      ...common,
      mode: "serverless",
      instanceType: undefined,
      initialInstances: provisioned,
      minInstances: provisioned,
      maxInstances: maxConcurrency,
      serverless: { maxConcurrency, memoryMiB: numberAt(variant, "ServerlessConfig.MemorySizeInMB") },
    };
  }
  const instanceType = variant.properties.InstanceType;
  if (typeof instanceType !== "string")
    throw new TemplateShapeError(
      `AWS::SageMaker::EndpointConfig ${config.id}`,
      "ProductionVariants[0].InstanceType",
      "is missing (and there is no ServerlessConfig)",
    );
  const initial = numberAt(variant, "InitialInstanceCount");
  return {
    ...common,
    mode: "realtime",
    instanceType,
    initialInstances: initial,
    minInstances: initial,
    maxInstances: initial,
    serverless: undefined,
  };
}

function mappingsOf(
  template: CfnTemplate,
  fn: TemplateResource,
): { intake: LaneShape; intakeMappingId: string; batch?: LaneShape } {
  const lanes = template
    .ofType("AWS::Lambda::EventSourceMapping")
    .filter((m) => referencedId(m.properties.FunctionName) === fn.id)
    .map((mapping) => {
      const queue = template.follow(
        mapping,
        "EventSourceArn",
        mapping.properties.EventSourceArn,
        "AWS::SQS::Queue",
      );
      const isBatch = /batch/i.test(queue.path ?? queue.id);
      return { isBatch, id: mapping.id, lane: readLane(mapping, queue) };
    });
  const intake = lanes.filter((l) => !l.isBatch);
  if (intake.length !== 1)
    throw new TemplateShapeError(
      `AWS::Lambda::Function ${fn.id}`,
      "AWS::Lambda::EventSourceMapping",
      `expected one intake-queue mapping of the decide function, found ${intake.length}`,
    );
  const batch = lanes.find((l) => l.isBatch)?.lane;
  return { intake: intake[0]!.lane, intakeMappingId: intake[0]!.id, ...(batch ? { batch } : {}) };
}

function readLane(mapping: TemplateResource, queue: TemplateResource): LaneShape {
  // CloudFormation takes the redrive policy as an object or as a JSON string.
  const raw = queue.properties.RedrivePolicy;
  const redrive =
    typeof raw === "string"
      ? { ...queue, properties: JSON.parse(raw) as Record<string, unknown> }
      : undefined;
  return {
    batchSize: numberAt(mapping, "BatchSize", AWS_BEHAVIOUR.lambda.defaultBatchSize),
    batchingWindowSeconds: numberAt(mapping, "MaximumBatchingWindowInSeconds", 0),
    maxConcurrency: optionalNumberAt(mapping, "ScalingConfig.MaximumConcurrency"),
    visibilityTimeoutSeconds: numberAt(
      queue,
      "VisibilityTimeout",
      AWS_BEHAVIOUR.sqs.defaultVisibilitySeconds,
    ),
    maxReceiveCount:
      raw === undefined
        ? undefined
        : redrive
          ? numberAt(redrive, "maxReceiveCount")
          : numberAt(queue, "RedrivePolicy.maxReceiveCount"),
  };
}
