/**
 * The batch files step in the template (observation 10 of issue 24): a batch's results and errors
 * files are written by a function of its own, fed one batch at a time by the batch files queue
 * (with its dead-letter queue), with the time a large batch needs. The decide and review
 * functions, which settle a batch's last item or label, only ask it: they may send to its queue
 * and may not write the bucket. (Before, the decide function wrote the files itself.)
 */
import { Template } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import { BATCH_FILES, MAX_RECEIVE_COUNT } from "../../shared/domain/topology.ts";
import { synthStack } from "../helpers/synth-stack.ts";

type Resources = Record<string, { Type: string; Properties: Record<string, unknown> }>;
type Statement = { Action: string | string[]; Resource: unknown };

let resources: Resources;

beforeAll(() => {
  resources = Template.fromStack(synthStack()).toJSON().Resources as Resources;
}, 120_000);

/** The logical id of the one resource of `type` whose id starts with `prefix`. */
function idOf(type: string, prefix: string): string {
  const ids = Object.keys(resources).filter((id) => resources[id]!.Type === type && id.startsWith(prefix));
  expect(ids, `${type} ${prefix}`).toHaveLength(1);
  return ids[0]!;
}

/** Every statement of the policies attached to the function's role. */
function statementsOf(functionId: string): Statement[] {
  const role = (resources[functionId]!.Properties.Role as { "Fn::GetAtt": [string, string] })[
    "Fn::GetAtt"
  ][0];
  return Object.values(resources)
    .filter((r) => r.Type === "AWS::IAM::Policy")
    .filter((r) => JSON.stringify(r.Properties.Roles).includes(`"${role}"`))
    .flatMap((r) => (r.Properties.PolicyDocument as { Statement: Statement[] }).Statement);
}

const actions = (s: Statement) => (Array.isArray(s.Action) ? s.Action : [s.Action]);
const writesBucket = (s: Statement) => actions(s).some((a) => /^s3:(PutObject|\*)/.test(a));
const sendsTo = (queueId: string) => (s: Statement) =>
  actions(s).includes("sqs:SendMessage") && JSON.stringify(s.Resource).includes(`"${queueId}"`);

describe("the batch files step", () => {
  it("runs in a function of its own, fed one batch at a time by its queue, with a dead-letter queue", () => {
    const files = idOf("AWS::Lambda::Function", "PipelineBatchFiles");
    const queue = idOf("AWS::SQS::Queue", "PipelineBatchJobsFilesQueue");
    const deadLetters = idOf("AWS::SQS::Queue", "PipelineBatchJobsFilesDeadLetterQueue");
    expect(resources[files]!.Properties).toMatchObject({
      Timeout: BATCH_FILES.timeoutSeconds,
      MemorySize: BATCH_FILES.memoryMiB,
    });
    const mappings = Object.values(resources).filter(
      (r) =>
        r.Type === "AWS::Lambda::EventSourceMapping" &&
        JSON.stringify(r.Properties.EventSourceArn).includes(`"${queue}"`),
    );
    expect(mappings).toHaveLength(1);
    expect(mappings[0]!.Properties).toMatchObject({
      FunctionName: { Ref: files },
      BatchSize: BATCH_FILES.batchSize,
      FunctionResponseTypes: ["ReportBatchItemFailures"],
    });
    expect(resources[queue]!.Properties.RedrivePolicy).toEqual({
      deadLetterTargetArn: { "Fn::GetAtt": [deadLetters, "Arn"] },
      maxReceiveCount: MAX_RECEIVE_COUNT,
    });
    expect(statementsOf(files).some(writesBucket)).toBe(true);
  });

  it("is only asked by the functions that settle batch items: they send to its queue and never write the files", () => {
    const queue = idOf("AWS::SQS::Queue", "PipelineBatchJobsFilesQueue");
    for (const name of ["PipelineDecide", "PipelineReview8", "PipelineReviewPage"]) {
      const fn = idOf("AWS::Lambda::Function", name);
      const statements = statementsOf(fn);
      expect(statements.some(sendsTo(queue)), name).toBe(true);
      expect(statements.filter(writesBucket), name).toEqual([]);
      const env = (resources[fn]!.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
      expect(env.BATCH_FILES_QUEUE_URL, name).toEqual({ Ref: queue });
    }
  });
});
