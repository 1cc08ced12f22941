/**
 * Rollback on what a bad fleet shows (issue 32, item 3), with the deployment simulation on the
 * stack as synthesized now: a new fleet that answers 503 to everything, one twice as slow, one
 * that never finishes loading, and one nobody calls during its bake (no prober) each roll back; a
 * healthy fleet deploys, in a quiet hour on the endpoint prober's calls (issue 42), at a steady
 * minute-by-minute load and in a burst that has it refuse most calls.
 * The same fleets against the deployment the stack had before (all traffic at once, one alarm on
 * the decide function's non-overload failures) passed the bake, but the one that never loads.
 */
import { Template } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import { type NewFleet, simulateDeployment } from "../../infra/capacity/simulation/deployment-sim.ts";
import { CfnTemplate } from "../../infra/capacity/template/template.ts";
import {
  type DeploymentPlan,
  readDeploymentPlan,
} from "../../infra/capacity/template/template-deployment.ts";
import { ENDPOINT_PROBER } from "../../shared/domain/topology/prober.ts";
import { CAPACITY_FOLLOWER, METRICS } from "../../shared/domain/topology.ts";
import { synthStack } from "../helpers/synth-stack.ts";

type Resource = { Type: string; Properties: Record<string, unknown> };
type Json = { Resources: Record<string, Resource> };
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
    for (const source of ["greenCalls", "greenRefused", "greenLatency", "baking", "probeReplies"] as const)
      expect(sources).toContain(source);
  });

  it.each(bad)("rolls back a new fleet that %s", (_, fleet) => {
    const result = simulateDeployment(plan, fleet, steady);
    expect(result.outcome).toBe("rolledBack");
    // Within the canary's bake (after the new instances' start): only the canary saw traffic.
    expect(result.atMinute).toBeLessThanOrEqual(5 + plan.canaryBakeSeconds / 60);
  });

  it("deploys in a quiet hour on the prober's calls, and rolls back a fleet nobody called (no prober)", () => {
    const quiet = { ...steady, callsPerMinute: 0 };
    expect(simulateDeployment(plan, { kind: "healthy" }, quiet).outcome).toBe("completed");
    const unprobed = simulateDeployment({ ...plan, prober: undefined }, { kind: "healthy" }, quiet);
    expect(unprobed).toMatchObject({ outcome: "rolledBack", by: expect.stringMatching(/NewFleetSilent$/) });
    // The prober's calls alone find a broken or slow fleet.
    for (const [, fleet] of bad) expect(simulateDeployment(plan, fleet, quiet).outcome).toBe("rolledBack");
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

const refOf = (value: unknown) => {
  const v = value as { Ref?: string; "Fn::GetAtt"?: string[] };
  return v.Ref ?? v["Fn::GetAtt"]?.[0];
};
const ofType = (type: string) => Object.entries(json.Resources).filter(([, r]) => r.Type === type);

describe("the endpoint prober (issue 42, item 3)", () => {
  const found = () => {
    const probers = ofType("AWS::Lambda::Function").filter(([, f]) =>
      JSON.stringify(f.Properties.Environment ?? {}).includes("PROBED_ENDPOINT_NAME"),
    );
    expect(probers).toHaveLength(1);
    return probers[0]!;
  };

  it("runs every minute on the real-time endpoint, four calls a run, within its timeout", () => {
    const [id, fn] = found();
    const env = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    const endpoint = ofType("AWS::SageMaker::Endpoint").find(
      ([, e]) => e.Properties.RetainAllVariantProperties,
    );
    expect(env.PROBED_ENDPOINT_NAME).toEqual(endpoint![1].Properties.EndpointName);
    expect(env.PROBE_CALLS_PER_RUN).toBe(String(ENDPOINT_PROBER.callsPerRun));
    expect(fn.Properties.Timeout).toBeGreaterThanOrEqual(
      (ENDPOINT_PROBER.callsPerRun * ENDPOINT_PROBER.callTimeoutMs) / 1000,
    );
    const rules = ofType("AWS::Events::Rule").filter(([, r]) =>
      JSON.stringify(r.Properties.Targets).includes(id),
    );
    expect(rules.map(([, r]) => r.Properties.ScheduleExpression)).toEqual(["rate(1 minute)"]);
  });

  it("is watched like every pipeline function: its errors and throttles are health warnings", () => {
    const [id] = found();
    const [[, composite]] = ofType("AWS::CloudWatch::CompositeAlarm") as [[string, Resource]];
    for (const metric of ["Errors", "Throttles"]) {
      const alarms = ofType("AWS::CloudWatch::Alarm").filter(
        ([, a]) =>
          a.Properties.MetricName === metric &&
          JSON.stringify(a.Properties.Dimensions ?? []).includes(`"${id}"`),
      );
      expect(alarms, metric).toHaveLength(1);
      expect(JSON.stringify(composite.Properties.AlarmRule)).toContain(`"${alarms[0]![0]}"`);
    }
  });

  it("may describe and invoke the one endpoint, and nothing else", () => {
    const [, fn] = found();
    const role = refOf(fn.Properties.Role);
    const statements = ofType("AWS::IAM::Policy")
      .filter(([, p]) => ((p.Properties.Roles ?? []) as unknown[]).some((r) => refOf(r) === role))
      .flatMap(
        ([, p]) => (p.Properties.PolicyDocument as { Statement: Record<string, unknown>[] }).Statement,
      );
    const actions = statements.flatMap((st) => [st.Action].flat() as string[]);
    expect(actions.filter((a) => a.startsWith("sagemaker:")).sort()).toEqual([
      "sagemaker:DescribeEndpoint",
      "sagemaker:InvokeEndpoint",
    ]);
    expect(actions.filter((a) => !/^(sagemaker|xray|sqs):/.test(a))).toEqual([]);
    const endpointId = ofType("AWS::SageMaker::Endpoint").find(
      ([, e]) => e.Properties.RetainAllVariantProperties,
    )![0];
    const sagemaker = statements.find((st) => JSON.stringify(st.Action).includes("InvokeEndpoint"))!;
    expect(sagemaker.Resource).toEqual({ Ref: endpointId });
  });

  it("is what the silent alarm judges: its replies while the follower says the new fleet bakes", () => {
    const silent = ofType("AWS::CloudWatch::Alarm").find(([id]) => id.includes("NewFleetSilent"))![1];
    const metrics = silent.Properties.Metrics as {
      Id: string;
      Expression?: string;
      MetricStat?: { Metric: { MetricName: string; Dimensions: { Name: string; Value: string }[] } };
    }[];
    expect(metrics.find((m) => m.Expression)?.Expression).toBe(ENDPOINT_PROBER.silentWhileBaking);
    const read = metrics.filter((m) => m.MetricStat).map((m) => [m.Id, m.MetricStat!.Metric.MetricName]);
    expect(Object.fromEntries(read)).toEqual({
      baking: METRICS.follower.deploymentBaking,
      replies: ENDPOINT_PROBER.metrics.replies,
    });
    const replies = metrics.find((m) => m.Id === "replies")!.MetricStat!.Metric;
    expect(replies.Dimensions).toEqual([{ Name: "service", Value: ENDPOINT_PROBER.service }]);
  });
});

describe("the capacity follower's heartbeat (issue 42, item 4)", () => {
  it("alarms when the follower has published nothing for as long as a reading is trusted", () => {
    const stale = ofType("AWS::CloudWatch::Alarm").filter(
      ([, a]) =>
        a.Properties.MetricName === METRICS.follower.instancesInService &&
        a.Properties.Statistic === "SampleCount",
    );
    expect(stale).toHaveLength(1);
    const [id, alarm] = stale[0]!;
    expect(alarm.Properties).toMatchObject({
      Namespace: METRICS.namespace,
      Dimensions: [{ Name: "service", Value: METRICS.service.capacityFollower }],
      Period: CAPACITY_FOLLOWER.periodSeconds,
      EvaluationPeriods: CAPACITY_FOLLOWER.staleAfterSeconds / CAPACITY_FOLLOWER.periodSeconds,
      ComparisonOperator: "LessThanThreshold",
      Threshold: 1,
      TreatMissingData: "breaching",
    });
    // A warning: in the composite "pipeline unhealthy" alarm, which notifies the alarm topic, and
    // named so its own transitions go out through the warnings' state-change rule.
    const [[, composite]] = ofType("AWS::CloudWatch::CompositeAlarm") as [[string, Resource]];
    expect(JSON.stringify(composite.Properties.AlarmRule)).toContain(`"${id}"`);
    const topics = ofType("AWS::SNS::Topic").map(([topicId]) => topicId);
    expect(topics.some((t) => JSON.stringify(composite.Properties.AlarmActions).includes(t))).toBe(true);
    expect(String(alarm.Properties.AlarmName)).toMatch(/Warning-/);
  });
});
