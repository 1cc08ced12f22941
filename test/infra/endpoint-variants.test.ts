/**
 * The endpoint's other shapes, each synthesized on its own: GPU instance types with the CUDA image,
 * and the serverless endpoint within SageMaker's limits, cdk-nag clean and sized for cold starts.
 */
import { Annotations, Match, Template } from "aws-cdk-lib/assertions";
import { describe, expect, it } from "vitest";
import { isGpuInstance } from "../../infra/constructs/endpoint/instance-types.ts";
import { checkServerlessSettings } from "../../infra/constructs/endpoint/serverless-settings.ts";
import { DECIDE_FUNCTION, SERVERLESS_DECIDE } from "../../shared/domain/topology.ts";
import { expectSizingFits, templateSizing } from "../helpers/sizing.ts";
import { synthStack } from "../helpers/synth-stack.ts";

describe("DecisionStack's endpoint variants", () => {
  it("takes GPU instance types with the CUDA image", () => {
    expect(isGpuInstance("ml.g5.xlarge")).toBe(true);
    expect(isGpuInstance("ml.c6i.xlarge")).toBe(false);
    const gpu = Template.fromStack(synthStack({ instanceType: "ml.g5.xlarge" }));
    gpu.hasResourceProperties("AWS::SageMaker::Model", {
      PrimaryContainer: Match.objectLike({ Environment: { DECIDE_GPU: "cuda" } }),
    });
  });

  it("deploys a serverless endpoint within the documented limits, cdk-nag clean, with cold-start-sized tries", () => {
    // The real-time batch lane: both of the decide function's mappings share the serverless concurrency.
    const serverless = synthStack({
      endpointMode: "serverless",
      serverless: { memoryMiB: 6144, maxConcurrency: 10 },
      batchLane: "realtime",
    });
    const errors = Annotations.fromStack(serverless).findError(
      "*",
      Match.stringLikeRegexp("(AwsSolutions|Serverless)-.*"),
    );
    expect(errors.map((e) => `${e.id}: ${String(e.entry.data).slice(0, 120)}`)).toEqual([]);
    const t = Template.fromStack(serverless);
    t.hasResourceProperties("AWS::SageMaker::EndpointConfig", {
      ProductionVariants: [
        Match.objectLike({
          ServerlessConfig: { MemorySizeInMB: 6144, MaxConcurrency: 10 },
          InstanceType: Match.absent(),
        }),
      ],
      KmsKeyId: Match.absent(),
    });
    t.hasResourceProperties("AWS::SageMaker::Model", {
      EnableNetworkIsolation: false,
      PrimaryContainer: Match.objectLike({
        Environment: Match.objectLike({ DECIDE_GPU: "off", DECIDE_BODY_LIMIT: String(4 * 1024 * 1024) }),
      }),
    });
    t.resourceCountIs("AWS::ApplicationAutoScaling::ScalableTarget", 0);
    t.hasResourceProperties("AWS::Lambda::Function", {
      Environment: { Variables: Match.objectLike({ ENDPOINT_TIMEOUT_MS: "55000", ENDPOINT_ATTEMPTS: "2" }) },
      Timeout: DECIDE_FUNCTION.timeoutSeconds,
    });
    // Two 55 s tries and their backoff fit the decide function's timeout.
    expect(
      (SERVERLESS_DECIDE.endpointTimeoutMs * SERVERLESS_DECIDE.endpointAttempts) / 1000 + 1,
    ).toBeLessThan(DECIDE_FUNCTION.timeoutSeconds);
    // Both mappings together within MaxConcurrency; each call on an instance of its own.
    expectSizingFits(templateSizing(t));
    expect(templateSizing(t).intake.concurrency).toBe(10 - 2);
    expect(() => checkServerlessSettings({ memoryMiB: 7000 })).toThrow(
      "serverlessMemoryMiB must be one of 1024",
    );
    expect(() => checkServerlessSettings({ maxConcurrency: 201 })).toThrow("from 1 to 200");
    expect(() => checkServerlessSettings({}, "ml.g5.xlarge")).toThrow("CPU only");
    expect(checkServerlessSettings({})).toEqual({ memoryMiB: 4096, maxConcurrency: 5 });
  });
});
