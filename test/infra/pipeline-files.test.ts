/**
 * The pipeline's files in the synthesized stack: the bucket (encrypted, versioned, TLS only,
 * lifecycle rules, access logs), the daily recalibration that may only read and put proposals,
 * and the batch lane (S3 notification on incoming/, the decide function's second event source
 * mapping at a bounded concurrency, the intake function's least privilege).
 */
import { Match, Template } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import { ASYNC_LANE } from "../../shared/domain/topology.ts";
import { type Resource, synthStack } from "../helpers/synth-stack.ts";

let template: Template;

beforeAll(() => {
  template = Template.fromStack(synthStack());
}, 120_000);

describe("the pipeline's files", () => {
  it("keeps proposals in an encrypted, versioned, TLS-only bucket with lifecycle rules, written only by the daily recalibration", () => {
    const buckets = Object.entries(template.findResources("AWS::S3::Bucket") as Record<string, Resource>);
    expect(buckets).toHaveLength(2); // the bucket and its access logs
    for (const [, bucket] of buckets) {
      expect(bucket.Properties.BucketEncryption).toBeDefined();
      expect(bucket.Properties.VersioningConfiguration).toEqual({ Status: "Enabled" });
      expect(bucket.Properties.PublicAccessBlockConfiguration).toMatchObject({
        BlockPublicAcls: true,
        RestrictPublicBuckets: true,
      });
      expect((bucket.Properties.LifecycleConfiguration as { Rules: unknown[] }).Rules.length).toBeGreaterThan(
        0,
      );
    }
    const policies = Object.values(
      template.findResources("AWS::S3::BucketPolicy") as Record<string, Resource>,
    );
    for (const policy of policies) {
      const text = JSON.stringify(policy.Properties.PolicyDocument);
      expect(text).toMatch(/"aws:SecureTransport":"false"/);
    }
    // The recalibration may touch calibration/* only, and runs daily.
    const role = JSON.stringify(
      Object.values(template.findResources("AWS::IAM::Policy") as Record<string, Resource>).filter((p) =>
        JSON.stringify(p.Properties.Roles).includes("Recalibrate"),
      ),
    );
    expect(role).toMatch(/calibration\/\*/);
    expect(role).not.toMatch(/"s3:DeleteObject\*?"/);
    template.hasResourceProperties("AWS::Events::Rule", {
      ScheduleExpression: "rate(1 day)",
      Description: Match.stringLikeRegexp("recalibration"),
    });
  });

  it("starts batch intake from incoming/ and feeds the batch lane to the async lane's submit function at a bounded concurrency", () => {
    const notifications = JSON.stringify(template.findResources("Custom::S3BucketNotifications"));
    expect(notifications).toMatch(/"Name":"prefix","Value":"incoming\/"/);
    const mappings = Object.values(
      template.findResources("AWS::Lambda::EventSourceMapping") as Record<string, Resource>,
    );
    const batchLane = mappings.filter((m) =>
      JSON.stringify(m.Properties.EventSourceArn).includes("BatchQueue"),
    );
    expect(batchLane).toHaveLength(1);
    // The default batch lane is async (-c batchLane=realtime gives it to the decide function).
    expect(batchLane[0]!.Properties).toMatchObject({
      ScalingConfig: { MaximumConcurrency: ASYNC_LANE.submit.maxConcurrency },
      FunctionResponseTypes: ["ReportBatchItemFailures"],
    });
    expect(JSON.stringify(batchLane[0]!.Properties.FunctionName)).toMatch(/PipelineAsyncSubmit/);
    const intake = JSON.stringify(
      Object.values(template.findResources("AWS::IAM::Policy") as Record<string, Resource>).filter((p) =>
        JSON.stringify(p.Properties.Roles).includes("BatchIntake"),
      ),
    );
    expect(intake).toMatch(/incoming\/\*/);
    expect(intake).toMatch(/batches\/\*/);
    expect(intake).toMatch(/sqs:SendMessage/);
    expect(intake).not.toMatch(/"s3:DeleteObject\*?"/);
  });
});
