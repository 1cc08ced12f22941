/**
 * How the endpoint spreads calls over its instances, read from the template and simulated. An
 * instance admits two calls and refuses the rest (503 queue_full, then a backoff of 30 s or
 * more), so SageMaker's default random routing refuses calls while other instances stand idle:
 * the sizing table needed about 1.8 times the busy instance count to keep up. The stack asks for
 * LEAST_OUTSTANDING_REQUESTS; the model assumes it compares only two instances drawn at random
 * (`AWS_BEHAVIOUR.sageMaker.leastOutstandingDraws`), and it still refuses a fraction as often.
 */
import { Template } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import { instanceSecondsPerItem } from "../../infra/capacity/measured-times.ts";
import type { PipelineShape, Routing } from "../../infra/capacity/shape.ts";
import { simulate } from "../../infra/capacity/simulate.ts";
import { readPipelineShape } from "../../infra/capacity/template/template-reader.ts";
import { synthStack } from "../helpers/synth-stack.ts";

type Json = { Resources: Record<string, { Type: string; Properties: Record<string, unknown> }> };
const variantOf = (json: Json) =>
  (
    Object.values(json.Resources).find((r) => r.Type === "AWS::SageMaker::EndpointConfig")!.Properties
      .ProductionVariants as Record<string, unknown>[]
  )[0]!;

const INSTANCES = 24;
let template: Json;
let shape: PipelineShape;

beforeAll(() => {
  // A fixed fleet (minimum = maximum), so routing alone makes the difference.
  template = Template.fromStack(
    synthStack({ initialInstanceCount: INSTANCES, maxInstanceCount: INSTANCES }),
  ).toJSON() as Json;
  shape = readPipelineShape(template);
}, 180_000);

/** Thirty minutes of fresh items at 10/s on the stack's shape with the given routing. */
function run(routing: Routing) {
  return simulate({
    shape: { ...shape, endpoint: { ...shape.endpoint, routing } },
    load: { ratePerSecond: 10, durationSeconds: 30 * 60 },
    secondsPerItem: instanceSecondsPerItem(shape.endpoint.instanceType!, "fresh"),
  });
}

describe("routing calls over the instances", () => {
  it("asks SageMaker for least-outstanding routing on instances, and nothing of a serverless variant", () => {
    expect(variantOf(template).RoutingConfig).toEqual({ RoutingStrategy: "LEAST_OUTSTANDING_REQUESTS" });
    expect(shape.endpoint.routing).toBe("least-outstanding");
    const serverless = Template.fromStack(synthStack({ endpointMode: "serverless" })).toJSON() as Json;
    expect(variantOf(serverless).RoutingConfig).toBeUndefined();
  }, 180_000);

  it("refuses far fewer calls and answers sooner than random routing on the same fleet", () => {
    const random = run("random");
    const least = run("least-outstanding");
    const exact = run("least-outstanding-exact");
    for (const r of [random, least, exact]) {
      expect(r.deadLettered).toBe(0);
      expect(r.arrived).toBe(r.decided + r.waiting);
    }
    expect(random.refusals.queueFull).toBeGreaterThan(1_000);
    expect(least.refusals.queueFull).toBeLessThan(random.refusals.queueFull / 3);
    // A refused call now comes back after the wait the fleet lets it expect (seconds here), not
    // 15 to 30 s, so random routing's refusals cost less than they did; they still cost.
    expect(least.p99Seconds).toBeLessThan(random.p99Seconds);
    // Knowing every instance's load, a router refuses nothing at this utilization (15.5 of 24 busy).
    expect(exact.refusals.queueFull).toBe(0);
    expect(exact.p99Seconds).toBeLessThanOrEqual(least.p99Seconds);
  });
});
