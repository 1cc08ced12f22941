/**
 * The bus keeps its sources apart, read from the synthesized template JSON: its resource policy
 * denies PutEvents with the pipeline's source, and with the pipeline's own detail types, to every
 * principal but the roles of the functions that publish the pipeline's events; upstream producers
 * may still put "Decision Requested" under their own sources. The policy is evaluated here, as
 * IAM would (an explicit deny wins), for each role of the stack and for a producer. Each
 * publishing role may put only the detail types its own function sends (issue 42, item 6: all 9
 * roles the denies exempt could put all 7 pipeline detail types), judged from its identity
 * policies and the bus policy together.
 */
import { Template } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import { BUS_POLICY_SIDS } from "../../infra/constructs/pipeline-bus.ts";
import { DetailType, EVENT_SOURCE, PIPELINE_DETAIL_TYPES } from "../../shared/domain/events.ts";
import { PUBLISHED_DETAIL_TYPES } from "../../shared/domain/topology/publishers.ts";
import { METRICS } from "../../shared/domain/topology.ts";
import { synthStack } from "../helpers/synth-stack.ts";

type Resource = { Type: string; Properties: Record<string, unknown> };
type Statement = {
  Sid?: string;
  Effect: string;
  Principal?: unknown;
  Action: string | string[];
  Resource: unknown;
  Condition?: Record<string, Record<string, unknown>>;
};
let resources: Record<string, Resource>;

beforeAll(() => {
  resources = Template.fromStack(synthStack()).toJSON().Resources;
}, 120_000);

const ofType = (type: string) => Object.entries(resources).filter(([, r]) => r.Type === type);
const roleOf = (value: unknown): string | undefined =>
  (value as { "Fn::GetAtt"?: string[] })?.["Fn::GetAtt"]?.[0];
const busId = () => ofType("AWS::Events::EventBus").map(([id]) => id)[0]!;

/** The bus policy's statements (CloudFormation holds one statement per EventBusPolicy). */
function busStatements(): Statement[] {
  const policies = ofType("AWS::Events::EventBusPolicy");
  for (const [, policy] of policies) expect(policy.Properties.EventBusName).toMatchObject({ Ref: busId() });
  return policies.flatMap(([, policy]) => [policy.Properties.Statement as Statement].flat());
}

/** Roles whose policies allow events:PutEvents on the bus (logical ids). */
function publisherRoles(): string[] {
  return ofType("AWS::IAM::Policy")
    .filter(([, p]) =>
      (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement.some(
        (s) =>
          s.Effect === "Allow" &&
          [s.Action].flat().includes("events:PutEvents") &&
          JSON.stringify(s.Resource).includes(`"${busId()}"`),
      ),
    )
    .flatMap(([, p]) => (p.Properties.Roles as { Ref: string }[]).map((r) => r.Ref))
    .sort();
}

/** Whether the bus policy denies `principal` (a role's logical id, or "producer") this entry. */
function denied(statements: Statement[], principal: string, source: string, detailType: string): boolean {
  const context: Record<string, string> = { "events:source": source, "events:detail-type": detailType };
  return statements
    .filter((s) => s.Effect === "Deny" && [s.Action].flat().includes("events:PutEvents"))
    .some((s) =>
      Object.entries(s.Condition ?? {}).every(([operator, keys]) =>
        Object.entries(keys).every(([key, values]) => {
          const list = [values].flat();
          if (operator === "StringEquals") return list.includes(context[key]);
          if (operator === "ArnNotEquals" && key === "aws:PrincipalArn")
            return !list.map(roleOf).includes(principal);
          throw new Error(`unexpected condition ${operator} ${key}`);
        }),
      ),
    );
}

describe("the pipeline's bus keeps its sources apart", () => {
  it("denies the pipeline's source and detail types to everyone but the roles that publish them", () => {
    const statements = busStatements();
    // The CDK prefixes each statement id with "cdk-".
    const sids = statements.map((s) => s.Sid?.replace(/^cdk-/, "")).sort();
    expect(sids).toEqual([BUS_POLICY_SIDS.detailTypes, BUS_POLICY_SIDS.source].sort());
    for (const s of statements) {
      expect(s).toMatchObject({ Effect: "Deny", Principal: { AWS: "*" }, Action: "events:PutEvents" });
      const exempt = [(s.Condition!.ArnNotEquals as Record<string, unknown>)["aws:PrincipalArn"]].flat();
      expect(exempt.map(roleOf).sort()).toEqual(publisherRoles());
    }
    // The roles that publish: the decide, auto-action, review and review page functions, the
    // batch files step and the daily jobs. Not the replay function: it puts nothing on the bus.
    const roles = publisherRoles();
    for (const fn of ["Decide", "AutoAction", "Review", "ReviewPage", "BatchFiles", "Drift", "Recalibrate"])
      expect(
        roles.some((r) => r.startsWith(`Pipeline${fn}`)),
        fn,
      ).toBe(true);
    expect(roles.some((r) => r.startsWith("PipelineReplay"))).toBe(false);
  });

  it("refuses a forged Decision Made from a producer, under the pipeline's source or its own", () => {
    const statements = busStatements();
    expect(denied(statements, "producer", EVENT_SOURCE, DetailType.made)).toBe(true);
    expect(denied(statements, "producer", "shop.orders", DetailType.made)).toBe(true);
    expect(denied(statements, "producer", EVENT_SOURCE, DetailType.requested)).toBe(true);
    for (const type of PIPELINE_DETAIL_TYPES)
      expect(denied(statements, "producer", "shop.orders", type), type).toBe(true);
    // What producers are told to do stays open.
    expect(denied(statements, "producer", "shop.orders", DetailType.requested)).toBe(false);
    // The pipeline's own functions publish as before.
    for (const role of publisherRoles())
      expect(denied(statements, role, EVENT_SOURCE, DetailType.made), role).toBe(false);
  });

  it("alarms on its own when a target refuses an event that does not match its record", () => {
    const alarms = ofType("AWS::CloudWatch::Alarm").filter(([, a]) =>
      JSON.stringify(a.Properties.Metrics ?? "").includes(`"${METRICS.eventMismatch}"`),
    );
    expect(alarms).toHaveLength(1);
    const [, alarm] = alarms[0]!;
    const services = JSON.stringify(alarm.Properties.Metrics);
    for (const service of [METRICS.service.autoAction, METRICS.service.reviewIntake])
      expect(services).toContain(`"${service}"`);
    expect(alarm.Properties).toMatchObject({ Threshold: 0, ComparisonOperator: "GreaterThanThreshold" });
    expect(alarm.Properties.AlarmActions).toHaveLength(1);
  });
});

/** Whether an Allow statement grants PutEvents on the bus for this entry (conditions evaluated). */
function allows(s: Statement, source: string, detailType: string): boolean {
  const context: Record<string, string> = { "events:source": source, "events:detail-type": detailType };
  const actions = [s.Action].flat();
  if (s.Effect !== "Allow" || !actions.some((a) => ["events:PutEvents", "events:*", "*"].includes(a)))
    return false;
  if (!(JSON.stringify(s.Resource).includes(`"${busId()}"`) || [s.Resource].flat().includes("*")))
    return false;
  return Object.entries(s.Condition ?? {}).every(([operator, keys]) =>
    Object.entries(keys).every(([key, values]) => {
      if (operator !== "StringEquals") throw new Error(`unexpected condition ${operator} ${key}`);
      return [values].flat().includes(context[key]);
    }),
  );
}

/** Whether `role` may put this entry on the bus: an identity policy allows it and the bus policy does not deny it. */
function mayPut(role: string, source: string, detailType: string): boolean {
  const granted = ofType("AWS::IAM::Policy")
    .filter(([, p]) => (p.Properties.Roles as { Ref: string }[]).some((r) => r.Ref === role))
    .flatMap(([, p]) => (p.Properties.PolicyDocument as { Statement: Statement[] }).Statement)
    .some((s) => allows(s, source, detailType));
  return granted && !denied(busStatements(), role, source, detailType);
}

/** Each publishing function's role (logical id), by the function's name in the app. */
function publisherRoleByName(): Map<string, string> {
  const kebab = (name: string) => name.replace(/[a-z](?=[A-Z])/g, "$&-").toLowerCase();
  const byService = new Map(Object.keys(PUBLISHED_DETAIL_TYPES).map((name) => [kebab(name), name]));
  const roles = new Map<string, string>();
  for (const [, fn] of ofType("AWS::Lambda::Function")) {
    const variables = (fn.Properties.Environment as { Variables?: Record<string, unknown> })?.Variables;
    const name = byService.get(String(variables?.POWERTOOLS_SERVICE_NAME));
    const role = roleOf(fn.Properties.Role);
    if (name && role) roles.set(name, role);
  }
  return roles;
}

describe("each publishing role speaks only its own detail types", () => {
  it("lets every role put exactly the detail types its function sends, under the pipeline's source", () => {
    const roles = publisherRoleByName();
    // The 9 roles the bus policy exempts, each named.
    expect([...roles.values()].sort()).toEqual(publisherRoles());
    expect([...roles.keys()].sort()).toEqual(Object.keys(PUBLISHED_DETAIL_TYPES).sort());
    for (const [name, role] of roles) {
      const own: readonly string[] = PUBLISHED_DETAIL_TYPES[name as keyof typeof PUBLISHED_DETAIL_TYPES];
      for (const type of Object.values(DetailType)) {
        expect(mayPut(role, EVENT_SOURCE, type), `${name} putting "${type}"`).toBe(own.includes(type));
        // Not under another source either.
        expect(mayPut(role, "shop.orders", type), `${name} putting "${type}" as shop.orders`).toBe(false);
      }
    }
  });

  it("refuses the internet-facing review page's role a Decision Made or an Item Actioned, and the decide function's a label", () => {
    const roles = publisherRoleByName();
    const [page, decide, auto] = [roles.get("ReviewPage")!, roles.get("Decide")!, roles.get("AutoAction")!];
    expect(mayPut(page, EVENT_SOURCE, DetailType.reviewed)).toBe(true);
    expect(mayPut(page, EVENT_SOURCE, DetailType.made)).toBe(false);
    expect(mayPut(page, EVENT_SOURCE, DetailType.actioned)).toBe(false);
    expect(mayPut(page, EVENT_SOURCE, DetailType.batchCompleted)).toBe(false);
    expect(mayPut(decide, EVENT_SOURCE, DetailType.made)).toBe(true);
    expect(mayPut(decide, EVENT_SOURCE, DetailType.reviewed)).toBe(false);
    expect(mayPut(decide, EVENT_SOURCE, DetailType.actioned)).toBe(false);
    expect(mayPut(auto, EVENT_SOURCE, DetailType.actioned)).toBe(true);
    expect(mayPut(auto, EVENT_SOURCE, DetailType.made)).toBe(false);
    // Nobody puts what only upstream producers send.
    for (const role of roles.values()) expect(mayPut(role, EVENT_SOURCE, DetailType.requested)).toBe(false);
  });
});
