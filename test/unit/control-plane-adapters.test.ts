/**
 * The capacity follower's control-plane adapters translate SageMaker's and Lambda's answers and
 * requests: nothing here stands in for those APIs, so a client that records the commands it is
 * sent checks what goes out and how the answer is read (DescribeEndpoint's counts summed over
 * variants, a pending deployment's "Baking" status; UpdateEventSourceMapping's scaling config).
 */
import { GetEventSourceMappingCommand, UpdateEventSourceMappingCommand } from "@aws-sdk/client-lambda";
import { DescribeEndpointCommand } from "@aws-sdk/client-sagemaker";
import { describe, expect, it } from "vitest";
import { LambdaMappingConcurrency } from "../../shared/adapters/lambda-mapping.ts";
import { SageMakerFleet } from "../../shared/adapters/sagemaker-fleet.ts";
import { EndpointUnavailableError } from "../../shared/domain/errors.ts";

/** A client whose `send` records each command and answers with `answer(command)`. */
function recording(answer: (command: unknown) => unknown) {
  const sent: unknown[] = [];
  const client = {
    send: async (command: unknown) => {
      sent.push(command);
      return answer(command);
    },
  };
  return { client: client as never, sent };
}

describe("SageMakerFleet", () => {
  it("reads the instances in service and desired, and whether a new fleet bakes", async () => {
    const { client, sent } = recording(() => ({
      ProductionVariants: [{ CurrentInstanceCount: 3, DesiredInstanceCount: 5 }],
      PendingDeploymentSummary: {
        ProductionVariants: [{ VariantStatus: [{ Status: "Baking" }] }],
      },
    }));
    expect(await new SageMakerFleet(client, "ep").counts()).toEqual({
      inService: 3,
      desired: 5,
      baking: true,
    });
    expect(sent[0]).toBeInstanceOf(DescribeEndpointCommand);
    expect((sent[0] as DescribeEndpointCommand).input).toEqual({ EndpointName: "ep" });
    const idle = recording(() => ({ ProductionVariants: [{ CurrentInstanceCount: 1 }] }));
    expect(await new SageMakerFleet(idle.client, "ep").counts()).toEqual({
      inService: 1,
      desired: 1,
      baking: false,
    });
  });

  it("turns a failed describe into an EndpointUnavailableError naming the endpoint", async () => {
    const { client } = recording(() => Promise.reject(new Error("ThrottlingException")));
    const error = await new SageMakerFleet(client, "ep").counts().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(EndpointUnavailableError);
    expect(String(error)).toMatch(/could not describe endpoint ep: ThrottlingException/);
  });
});

describe("LambdaMappingConcurrency", () => {
  it("reads and sets the mapping's MaximumConcurrency by its UUID", async () => {
    const { client, sent } = recording(() => ({ ScalingConfig: { MaximumConcurrency: 42 } }));
    const mapping = new LambdaMappingConcurrency(client, "uuid-1");
    expect(await mapping.current()).toBe(42);
    await mapping.set(6);
    expect(sent[0]).toBeInstanceOf(GetEventSourceMappingCommand);
    expect(sent[1]).toBeInstanceOf(UpdateEventSourceMappingCommand);
    expect((sent[1] as UpdateEventSourceMappingCommand).input).toEqual({
      UUID: "uuid-1",
      ScalingConfig: { MaximumConcurrency: 6 },
    });
  });
});
