/**
 * Rollback on what a bad fleet shows (issue 32, item 3), with the deployment simulation on the
 * stack as synthesized now: a new fleet that answers 503 to everything, one twice as slow, one
 * that never finishes loading, and one nobody calls during its bake each roll back; a healthy
 * fleet deploys, in a quiet minute-by-minute load and in a burst that has it refuse most calls.
 * The same fleets against the deployment the stack had before (all traffic at once, one alarm on
 * the decide function's non-overload failures) passed the bake, but the one that never loads.
 */
import { Template } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import { type NewFleet, simulateDeployment } from "../../infra/capacity/deployment-sim.ts";
import { CfnTemplate } from "../../infra/capacity/template.ts";
import { type DeploymentPlan, readDeploymentPlan } from "../../infra/capacity/template-deployment.ts";
import { synthStack } from "../helpers/synth-stack.ts";

type Json = { Resources: Record<string, { Type: string; Properties: Record<string, unknown> }> };
let json: Json;
let plan: DeploymentPlan;

beforeAll(() => {
  json = Template.fromStack(synthStack()).toJSON() as Json;
  plan = readDeploymentPlan(new CfnTemplate(json));
}, 180_000);

/** Calls of a few fresh items each, about 1 item/s. */
const steady = { callsPerMinute: 20, callSeconds: 4.6 };
const bad: [string, NewFleet][] = [
  ["answers 503 to everything", { kind: "refusesAll" }],
  ["answers twice as slowly", { kind: "slower", factor: 2 }],
  ["never finishes loading", { kind: "neverReady" }],
];

describe("a deployment of the real-time endpoint", () => {
  it("shifts a canary of half the new fleet first, and watches the new fleet's own metrics", () => {
    expect(plan.canaryShare).toBe(0.5);
    expect(plan.canaryBakeSeconds).toBeGreaterThanOrEqual(900);
    expect(plan.alarms.length).toBe(4);
    const sources = new Set(plan.alarms.flatMap((a) => a.queries.map((q) => q.source)));
    for (const source of ["greenCalls", "greenRefused", "greenLatency", "baking"] as const)
      expect(sources).toContain(source);
  });

  it.each(bad)("rolls back a new fleet that %s", (_, fleet) => {
    const result = simulateDeployment(plan, fleet, steady);
    expect(result.outcome).toBe("rolledBack");
    // Within the canary's bake (after the new instances' start): only the canary saw traffic.
    expect(result.atMinute).toBeLessThanOrEqual(5 + plan.canaryBakeSeconds / 60);
  });

  it("rolls back a new fleet nobody called during its bake (a deploy in a quiet hour)", () => {
    const result = simulateDeployment(plan, { kind: "healthy" }, { ...steady, callsPerMinute: 0 });
    expect(result).toMatchObject({ outcome: "rolledBack", by: expect.stringMatching(/NewFleetSilent$/) });
  });

  it("deploys a healthy fleet, at a steady rate and in a burst where it refuses 80% of the calls", () => {
    expect(simulateDeployment(plan, { kind: "healthy" }, steady).outcome).toBe("completed");
    const burst = { callsPerMinute: 600, callSeconds: 15.5, refusedShare: 0.8 };
    expect(simulateDeployment(plan, { kind: "healthy" }, burst).outcome).toBe("completed");
  });

  it("let the bad fleets through with the deployment the stack had before, but the one that never loads", () => {
    const before = structuredClone(json);
    const endpoint = Object.values(before.Resources).find((r) => r.Type === "AWS::SageMaker::Endpoint")!;
    const errors = Object.entries(before.Resources).find(
      ([, r]) => r.Type === "AWS::CloudWatch::Alarm" && r.Properties.MetricName === "endpoint_failures",
    )!;
    endpoint.Properties.DeploymentConfig = {
      BlueGreenUpdatePolicy: {
        TrafficRoutingConfiguration: { Type: "ALL_AT_ONCE", WaitIntervalInSeconds: 0 },
        TerminationWaitInSeconds: 900,
        MaximumExecutionTimeoutInSeconds: 3600,
      },
      AutoRollbackConfiguration: { Alarms: [{ AlarmName: { Ref: errors[0] } }] },
    };
    const old = readDeploymentPlan(new CfnTemplate(before));
    const outcomes = bad.map(([, fleet]) => simulateDeployment(old, fleet, steady).outcome);
    expect(outcomes).toEqual(["completed", "completed", "rolledBack"]);
    expect(simulateDeployment(old, { kind: "healthy" }, { ...steady, callsPerMinute: 0 }).outcome).toBe(
      "completed",
    );
  });
});
