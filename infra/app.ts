/**
 * The CDK app: `npm run synth` (offline, no credentials) or `npx cdk deploy`. Context values:
 * instanceType, minInstanceCount (or initialInstanceCount: the scaling minimum, and the count a new
 * variant starts with), maxInstanceCount, imageUri, alarmEmail, batchMaxConcurrency, endpointMode
 * (realtime | serverless | async: the live lane on the async endpoint too, nothing real-time
 * deployed; needs batchLane async), serverlessMemoryMiB, serverlessMaxConcurrency,
 * serverlessProvisionedConcurrency (e.g. `npx cdk deploy -c endpointMode=serverless`), batchLane
 * (async, the default: SageMaker Asynchronous Inference; or realtime), asyncInstanceType,
 * asyncMaxInstanceCount, reserveConcurrency=false (an account whose Lambda concurrency quota is
 * under 130), tierModels (a cascade's later models in the model archive: NAME=FILE,…).
 */
import { App, Aspects } from "aws-cdk-lib";
import { AwsSolutionsChecks, ServerlessChecks } from "cdk-nag";
import type { BatchLane } from "./constructs/batch-lane.ts";
import { tierModelsFromContext } from "./constructs/endpoint/tier-models.ts";
import { DecisionStack } from "./decision-stack.ts";

const app = new App();
const context = (key: string): string | undefined => app.node.tryGetContext(key);
const number = (key: string): number | undefined =>
  context(key) === undefined ? undefined : Number(context(key));
new DecisionStack(app, context("stackName") ?? "DecisionPipeline", {
  description:
    "decision-pipeline: LLM decision endpoint on SageMaker and its SQS/Lambda/DynamoDB/EventBridge pipeline",
  ...(context("instanceType") ? { instanceType: context("instanceType") } : {}),
  ...minInstancesOf(number("minInstanceCount"), number("initialInstanceCount")),
  ...(number("maxInstanceCount") ? { maxInstanceCount: number("maxInstanceCount") } : {}),
  ...(context("imageUri") ? { imageUri: context("imageUri") } : {}),
  ...(context("alarmEmail") ? { alarmEmail: context("alarmEmail") } : {}),
  ...(number("batchMaxConcurrency") ? { batchMaxConcurrency: number("batchMaxConcurrency") } : {}),
  ...endpointModeOf(context("endpointMode")),
  ...batchLaneOf(context("batchLane")),
  ...(context("asyncInstanceType") ? { asyncInstanceType: context("asyncInstanceType") } : {}),
  ...(number("asyncMaxInstanceCount") ? { asyncMaxInstanceCount: number("asyncMaxInstanceCount") } : {}),
  ...reserveOf(context("reserveConcurrency")),
  ...(context("tierModels") ? { tierModels: tierModelsFromContext(context("tierModels")!) } : {}),
});

/** The batch lane from context: async (the default) or realtime, refusing anything else by name. */
function batchLaneOf(lane: string | undefined) {
  if (lane === undefined) return {};
  if (lane !== "async" && lane !== "realtime")
    throw new Error(`-c batchLane must be async or realtime, got "${lane}"`);
  return { batchLane: lane as BatchLane };
}

/** Whether to reserve the review functions' concurrency: true unless `-c reserveConcurrency=false`. */
function reserveOf(value: string | undefined) {
  if (value === undefined || value === "true") return {};
  if (value !== "false") throw new Error(`-c reserveConcurrency must be true or false, got "${value}"`);
  return { reserveConcurrency: false };
}

/** The scaling minimum, under either name; both given must agree. */
function minInstancesOf(min: number | undefined, initial: number | undefined) {
  if (min !== undefined && initial !== undefined && min !== initial)
    throw new Error(
      `-c minInstanceCount (${min}) and -c initialInstanceCount (${initial}) disagree: give one`,
    );
  const count = min ?? initial;
  return count === undefined ? {} : { initialInstanceCount: count };
}

/**
 * The endpoint mode and serverless settings from context, refusing anything else by name (the
 * stack refuses async with `-c batchLane=realtime`).
 */
function endpointModeOf(mode: string | undefined) {
  if (mode === undefined || mode === "realtime") return {};
  if (mode === "async") return { endpointMode: "async" as const };
  if (mode !== "serverless")
    throw new Error(`-c endpointMode must be realtime, serverless or async, got "${mode}"`);
  return {
    endpointMode: "serverless" as const,
    serverless: {
      ...(number("serverlessMemoryMiB") ? { memoryMiB: number("serverlessMemoryMiB") } : {}),
      ...(number("serverlessMaxConcurrency") ? { maxConcurrency: number("serverlessMaxConcurrency") } : {}),
      ...(number("serverlessProvisionedConcurrency")
        ? { provisionedConcurrency: number("serverlessProvisionedConcurrency") }
        : {}),
    },
  };
}
// AWS Solutions and Serverless checks on every synth: errors fail it; every suppression carries its reason.
Aspects.of(app).add(new AwsSolutionsChecks({ verbose: true }));
Aspects.of(app).add(new ServerlessChecks({ verbose: true }));
app.synth();
