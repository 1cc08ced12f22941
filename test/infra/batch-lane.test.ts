/**
 * The batch lane's one default and its one refusal: the pipeline construct, built alone, takes
 * the same default as the stack (the async lane), and refuses `endpointMode: "async"` with the
 * real-time batch lane in the stack's words.
 */
import { App, Stack } from "aws-cdk-lib";
import { describe, expect, it } from "vitest";
import {
  DEFAULT_BATCH_LANE,
  refuseAsyncLiveLaneWithRealtimeBatch,
} from "../../infra/constructs/batch-lane.ts";
import { DecisionPipeline } from "../../infra/constructs/decision-pipeline.ts";

const REFUSAL =
  /-c endpointMode=async runs the live lane on the async endpoint, which -c batchLane=realtime does not deploy/;

/** A pipeline in a stack of its own, bundling skipped. */
function pipeline(props: ConstructorParameters<typeof DecisionPipeline>[2]): DecisionPipeline {
  const app = new App({ context: { "aws:cdk:bundling-stacks": [] } });
  return new DecisionPipeline(new Stack(app, "Alone"), "Pipeline", props);
}

describe("the batch lane's default", () => {
  it("is the async lane", () => {
    expect(DEFAULT_BATCH_LANE).toBe("async");
  });

  it("is the pipeline construct's too: built alone under endpointMode async it has the async lane's queues", () => {
    const built = pipeline({ endpointMode: "async" });
    expect(built.asyncNotifications).toBeDefined();
    expect(built.functions.decide).toBeUndefined();
  });
});

describe("endpointMode async with the real-time batch lane", () => {
  it("is refused by one function, in one message", () => {
    expect(() => refuseAsyncLiveLaneWithRealtimeBatch("async", "realtime")).toThrow(REFUSAL);
    expect(() => refuseAsyncLiveLaneWithRealtimeBatch("async", undefined)).not.toThrow();
    expect(() => refuseAsyncLiveLaneWithRealtimeBatch("realtime", "realtime")).not.toThrow();
  });

  it("is refused by the pipeline construct in the stack's words", () => {
    expect(() => pipeline({ endpointMode: "async", batchLane: "realtime" })).toThrow(REFUSAL);
  });
});
