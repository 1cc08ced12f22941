/**
 * Dead letters with a way home, read from the synthesized template JSON: one dead-letter queue
 * per source (each queue's redrive, each rule target, and one for the jobs' failures), each with
 * an alarm on its depth and one on new arrivals, and a replay function that knows and may use
 * every way home.
 */
import { Template } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import { DEAD_LETTER_SOURCES, RETURN_KIND } from "../../shared/domain/dead-letters.ts";
import { synthStack } from "../helpers/synth-stack.ts";

type Resource = { Type: string; Properties: Record<string, unknown> };
let resources: Record<string, Resource>;

beforeAll(() => {
  resources = Template.fromStack(synthStack()).toJSON().Resources;
}, 120_000);

const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
const refOf = (value: unknown): string | undefined =>
  (value as { "Fn::GetAtt"?: string[] })?.["Fn::GetAtt"]?.[0] ?? (value as { Ref?: string })?.Ref;
/** Every place a queue dead-letters into: its redrive, a rule target's DLQ, a function's on-failure destination. */
function deadLetterEdges(): { from: string; to: string }[] {
  const redrives = ofType("AWS::SQS::Queue").flatMap(([id, q]) => {
    const target = (q.Properties.RedrivePolicy as { deadLetterTargetArn?: unknown } | undefined)
      ?.deadLetterTargetArn;
    return target ? [{ from: id, to: refOf(target)! }] : [];
  });
  const rules = ofType("AWS::Events::Rule").flatMap(([id, rule]) =>
    ((rule.Properties.Targets ?? []) as { DeadLetterConfig?: { Arn: unknown } }[]).map((t) => ({
      from: id,
      to: refOf(t.DeadLetterConfig?.Arn)!,
    })),
  );
  const onFailure = ofType("AWS::Lambda::EventInvokeConfig").map(([id, c]) => ({
    from: id,
    to: refOf(
      (c.Properties.DestinationConfig as { OnFailure: { Destination: unknown } }).OnFailure.Destination,
    )!,
  }));
  return [...redrives, ...rules, ...onFailure];
}

describe("dead letters with a way home", () => {
  it("gives every queue and every bus rule a dead-letter queue of its own; only jobs share theirs", () => {
    const edges = deadLetterEdges();
    // The scheduled jobs: the pipeline's, the capacity follower's (a schedule and the endpoint's
    // deployment events), the daily audit (its own construct), and the rule that forwards each
    // warning's state change to the alarm topic.
    const jobs = (from: string) =>
      from.startsWith("PipelineJobs") ||
      from.startsWith("PipelineFollower") ||
      from.startsWith("AuditsAuditSchedule") ||
      from.startsWith("OperationsHealthWarningEvents") ||
      from.includes("EventInvokeConfig");
    const byQueue = new Map<string, string[]>();
    for (const edge of edges) byQueue.set(edge.to, [...(byQueue.get(edge.to) ?? []), edge.from]);
    const shared = [...byQueue].filter(([, from]) => from.length > 1 && !from.every(jobs));
    expect(shared).toEqual([]);
    // The jobs' failures (schedules and on-failure records) all land in one queue that nothing else uses.
    const jobQueues = new Set(edges.filter((e) => jobs(e.from)).map((e) => e.to));
    expect(jobQueues.size).toBe(1);
    // The batch lane dead-letters apart from the live intake.
    const to = (source: string) => edges.find((e) => e.from.startsWith(source))!.to;
    expect(to("PipelineBatchQueue")).not.toBe(to("PipelineIntakeQueue"));
    expect(to("PipelineReviewQueue")).toMatch(/^PipelineReviewDeadLetterQueue/);
    for (const rule of [
      "PipelineAutoRule",
      "PipelineHumanRule",
      "PipelineRejectedRule",
      "PipelineRequestedRule",
    ])
      expect(to(rule)).toMatch(new RegExp(`^${rule}DeadLetters`));
  });

  it("raises an alarm on each dead-letter queue's depth and on each new arrival, both with OK actions", () => {
    const deadLetterQueues = new Set(deadLetterEdges().map((e) => e.to));
    expect(deadLetterQueues.size).toBe(Object.keys(DEAD_LETTER_SOURCES).length);
    const alarms = ofType("AWS::CloudWatch::Alarm").map(([, a]) => a.Properties);
    const watching = (queue: string) =>
      alarms.filter((a) => JSON.stringify(a).includes(`"${queue}","QueueName"`));
    for (const queue of deadLetterQueues) {
      const found = watching(queue);
      const depth = found.find((a) => a.MetricName === "ApproximateNumberOfMessagesVisible");
      const arrival = found.find((a) =>
        (a.Metrics as { Expression?: string }[] | undefined)?.some((m) => m.Expression?.startsWith("RATE(")),
      );
      expect(depth, `${queue} depth`).toMatchObject({
        Threshold: 0,
        ComparisonOperator: "GreaterThanThreshold",
      });
      expect(arrival, `${queue} arrivals`).toMatchObject({
        Threshold: 0,
        ComparisonOperator: "GreaterThanThreshold",
      });
      // Arrivals are a rise of the letters held, visible or not: a replay's dry run hides the
      // letters it reads and shows them again, which is no arrival.
      const metrics = arrival!.Metrics as {
        Expression?: string;
        MetricStat?: { Metric: { MetricName: string } };
      }[];
      expect(metrics.find((m) => m.Expression)!.Expression).toBe("RATE(visible + hidden)");
      expect(metrics.flatMap((m) => (m.MetricStat ? [m.MetricStat.Metric.MetricName] : [])).sort()).toEqual([
        "ApproximateNumberOfMessagesNotVisible",
        "ApproximateNumberOfMessagesVisible",
      ]);
      for (const alarm of [depth!, arrival!]) expect(alarm.OKActions).toEqual(alarm.AlarmActions);
    }
  });

  it("lets the replay function send each source's letters home: its queue by redrive or re-send, or the rule's target", () => {
    const [, replay] = ofType("AWS::Lambda::Function").find(([id]) =>
      /^PipelineReplay[0-9A-F]{8}$/.test(id),
    )!;
    const routes = JSON.stringify(
      (replay.Properties.Environment as { Variables: Record<string, unknown> }).Variables.DEAD_LETTER_ROUTES,
    );
    const role = refOf(replay.Properties.Role);
    const statements = ofType("AWS::IAM::Policy")
      .filter(([, p]) => (p.Properties.Roles as unknown[]).some((r) => refOf(r) === role))
      .flatMap(
        ([, p]) =>
          (p.Properties.PolicyDocument as { Statement: { Action: string | string[]; Resource: unknown }[] })
            .Statement,
      );
    const allowed = (action: string, resource: string) =>
      statements.some(
        (s) => [s.Action].flat().includes(action) && JSON.stringify(s.Resource).includes(`"${resource}"`),
      );
    for (const source of Object.keys(DEAD_LETTER_SOURCES)) expect(routes).toContain(`\\"${source}\\":`);
    for (const { from, to } of deadLetterEdges()) {
      expect(allowed("sqs:ReceiveMessage", to), `receive ${to}`).toBe(true);
      if (resources[from]?.Type === "AWS::SQS::Queue") {
        expect(allowed("sqs:SendMessage", from), `send to ${from}`).toBe(true);
        expect(allowed("sqs:StartMessageMoveTask", to), `redrive ${to}`).toBe(true);
      }
      if (resources[from]?.Type === "AWS::Events::Rule") {
        // A rule's letters go to that rule's target queue, never back on the bus.
        const targets = (resources[from]!.Properties.Targets as { Arn: unknown }[])
          .map((target) => refOf(target.Arn)!)
          .filter((target) => resources[target]?.Type === "AWS::SQS::Queue");
        for (const target of targets)
          expect(allowed("sqs:SendMessage", target), `send to ${target}`).toBe(true);
        if (targets.length > 0)
          expect(allowed("sqs:StartMessageMoveTask", to), `no redrive of ${to}`).toBe(false);
      }
    }
    // Replay puts nothing on the bus: only the pipeline's functions that publish may.
    expect(statements.some((s) => [s.Action].flat().includes("events:PutEvents"))).toBe(false);
    expect(Object.values(DEAD_LETTER_SOURCES)).toContain(RETURN_KIND.rule);
  });
});
