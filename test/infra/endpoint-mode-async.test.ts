/**
 * `-c endpointMode=async` as synthesized: the live intake runs on the async endpoint beside the
 * batch lane, so the template has no real-time endpoint (no endpoint, configuration, scaling,
 * guardrail or capacity follower of one), no decide function, and its only scalable target starts
 * from zero; the submit function reads the intake and the result function may send its items
 * back there or to its dead-letter queue; cdk-nag finds nothing; the capacity model reads the one
 * lane it has (and says why `--rate` has nothing to simulate). `-c batchLane=realtime` with it is
 * refused by name.
 */
import { Annotations, Match, Template } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import { liveLaneIsAsync, readAsyncShape } from "../../infra/capacity/async-template.ts";
import { readPipelineShape } from "../../infra/capacity/template/template-reader.ts";
import { asyncItemsPerObject } from "../../shared/domain/async/async-objects.ts";
import { ASYNC_LANE } from "../../shared/domain/topology.ts";
import { synthStack } from "../helpers/synth-stack.ts";

type Resource = { Type: string; Properties: Record<string, unknown> };
let resources: Record<string, Resource>;
let nagErrors: unknown[];

beforeAll(() => {
  const stack = synthStack({ endpointMode: "async" });
  nagErrors = Annotations.fromStack(stack).findError(
    "*",
    Match.stringLikeRegexp("AwsSolutions-.*|Serverless-.*"),
  );
  resources = Template.fromStack(stack).toJSON().Resources;
}, 240_000);

const ofType = (type: string) =>
  Object.entries(resources).filter(([, r]) => r.Type === type) as [string, Resource][];
const text = (value: unknown) => JSON.stringify(value);
const functionId = (prefix: string) =>
  ofType("AWS::Lambda::Function").find(([id]) => id.startsWith(prefix))?.[0];

/** The event source mappings of the function whose logical id starts with `prefix`. */
function mappingsOf(prefix: string) {
  const fnId = functionId(prefix);
  return ofType("AWS::Lambda::EventSourceMapping")
    .filter(([, m]) => text(m.Properties.FunctionName).includes(`"${fnId}"`))
    .map(([, m]) => m.Properties);
}

/** The queue (logical id prefix) a mapping reads. */
const queueOf = (mapping: Record<string, unknown>) =>
  String((mapping.EventSourceArn as { "Fn::GetAtt": string[] })["Fn::GetAtt"][0]).replace(/[0-9A-F]{8}$/, "");

describe("-c endpointMode=async", () => {
  it("passes cdk-nag's AwsSolutions and Serverless packs", () => {
    expect(nagErrors).toEqual([]);
  });

  it("deploys no real-time endpoint: the one endpoint and configuration are the async ones", () => {
    const configs = ofType("AWS::SageMaker::EndpointConfig");
    expect(configs).toHaveLength(1);
    expect(configs[0]![1].Properties.AsyncInferenceConfig).toBeDefined();
    const endpoints = ofType("AWS::SageMaker::Endpoint");
    expect(endpoints).toHaveLength(1);
    expect(text(endpoints[0]![1].Properties.EndpointConfigName)).toContain(configs[0]![0]);
    // No deployment guardrail: the real-time endpoint's blue/green rollback is gone with it.
    expect(text(endpoints[0]![1].Properties)).not.toMatch(/DeploymentConfig|AutoRollback/);
  });

  it("runs no decide function and no capacity follower; nothing may call InvokeEndpoint", () => {
    expect(functionId("PipelineDecide")).toBeUndefined();
    expect(functionId("PipelineFollower")).toBeUndefined();
    const statements = ofType("AWS::IAM::Policy").flatMap(
      ([, p]) => (p.Properties.PolicyDocument as { Statement: { Action: unknown }[] }).Statement,
    );
    expect(statements.some((s) => text(s.Action).includes('"sagemaker:InvokeEndpoint"'))).toBe(false);
    expect(statements.some((s) => text(s.Action).includes("sagemaker:InvokeEndpointAsync"))).toBe(true);
  });

  it("feeds the submit function from the intake and the batch queue, an object's worth at a time", () => {
    const submit = mappingsOf("PipelineAsyncSubmit");
    expect(submit.map(queueOf).sort()).toEqual(["PipelineBatchQueue", "PipelineIntakeQueue"]);
    for (const mapping of submit)
      expect(mapping).toMatchObject({
        BatchSize: asyncItemsPerObject(),
        MaximumBatchingWindowInSeconds: ASYNC_LANE.submit.maxBatchingWindowSeconds,
        ScalingConfig: { MaximumConcurrency: ASYNC_LANE.submit.maxConcurrency },
        FunctionResponseTypes: ["ReportBatchItemFailures"],
      });
    // The intake has one consumer: each item is submitted once, then decided by the result function.
    const intakeReaders = ofType("AWS::Lambda::EventSourceMapping").filter(
      ([, m]) => queueOf(m.Properties) === "PipelineIntakeQueue",
    );
    expect(intakeReaders).toHaveLength(1);
  });

  it("tells both functions which records are the intake's, and lets the result function send them back or dead-letter them", () => {
    for (const prefix of ["PipelineAsyncSubmit", "PipelineAsyncResults"]) {
      const [, fn] = ofType("AWS::Lambda::Function").find(([id]) => id.startsWith(prefix))!;
      const variables = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(text(variables.INTAKE_QUEUE_ARN)).toContain("PipelineIntakeQueue");
      expect(text(variables.INTAKE_QUEUE_URL)).toContain("PipelineIntakeQueue");
      expect(text(variables.INTAKE_DLQ_URL)).toContain("PipelineDeadLetterQueue");
    }
    const resultsRole = text(
      ofType("AWS::IAM::Policy").filter(([id]) => id.startsWith("PipelineAsyncResults")),
    );
    for (const queue of ["PipelineIntakeQueue", "PipelineDeadLetterQueue"])
      expect(resultsRole).toMatch(new RegExp(`sqs:SendMessage.*${queue}`));
  });

  it("scales only the async endpoint, from zero: nothing runs, and nothing is billed for inference, idle", () => {
    const targets = ofType("AWS::ApplicationAutoScaling::ScalableTarget");
    expect(targets).toHaveLength(1);
    expect(targets[0]![1].Properties).toMatchObject({
      MinCapacity: 0,
      ScalableDimension: "sagemaker:variant:DesiredInstanceCount",
    });
    const [, endpoint] = ofType("AWS::SageMaker::Endpoint")[0]!;
    expect(text(targets[0]![1].Properties.ResourceId)).toContain(String(endpoint.Properties.EndpointName));
  });
});

describe("the capacity model's reading of an async live lane", () => {
  it("simulates the async lane from zero and refuses --rate with the reason and the command to use", () => {
    const template = { Resources: resources };
    expect(liveLaneIsAsync(template)).toBe(true);
    expect(readAsyncShape(template)).toMatchObject({
      minInstances: 0,
      itemsPerObject: asyncItemsPerObject(),
    });
    expect(() => readPipelineShape(template)).toThrow(
      /live lane on the async endpoint \(-c endpointMode=async\), idle \$0 per month; simulate it with --lane batch/,
    );
  });

  it("does not take a stack with a decide function for one", () => {
    const fn = (variables: Record<string, string>) => ({
      Type: "AWS::Lambda::Function",
      Properties: { Environment: { Variables: variables } },
    });
    const both = {
      Resources: { Decide: fn({ DECISION_ENDPOINT_NAME: "e" }), Submit: fn({ INTAKE_QUEUE_ARN: "q" }) },
    };
    expect(liveLaneIsAsync(both)).toBe(false);
    expect(liveLaneIsAsync({ Resources: { Submit: fn({ BATCH_QUEUE_URL: "q" }) } })).toBe(false);
  });
});

describe("-c endpointMode=async with -c batchLane=realtime", () => {
  it("is refused, naming both flags", () => {
    expect(() => synthStack({ endpointMode: "async", batchLane: "realtime" })).toThrow(
      /-c endpointMode=async runs the live lane on the async endpoint, which -c batchLane=realtime does not deploy/,
    );
  });
});
