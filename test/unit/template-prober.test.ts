/**
 * The endpoint prober as the deployment simulation reads it from a template (issue 42, item 3),
 * on small hand-written templates: its calls a minute from the function's environment, none
 * without a function or a rule that runs it, and a named refusal for two probers or a schedule
 * the simulation does not model.
 */
import { describe, expect, it } from "vitest";
import { TemplateShapeError } from "../../infra/capacity/errors.ts";
import { CfnTemplate } from "../../infra/capacity/template/template.ts";
import { readProber } from "../../infra/capacity/template/template-prober.ts";
import { ENDPOINT_PROBER } from "../../shared/domain/topology/prober.ts";

const prober = (env: Record<string, string> = {}) => ({
  Type: "AWS::Lambda::Function",
  Properties: { Environment: { Variables: { PROBED_ENDPOINT_NAME: "e", ...env } } },
});
const rule = (schedule: string, target = "Prober", state?: string) => ({
  Type: "AWS::Events::Rule",
  Properties: {
    ScheduleExpression: schedule,
    ...(state ? { State: state } : {}),
    Targets: [{ Arn: { "Fn::GetAtt": [target, "Arn"] }, Id: "t" }],
  },
});
const template = (resources: Record<string, unknown>) => new CfnTemplate({ Resources: resources });

describe("the endpoint prober in a template", () => {
  it("sends its run's calls every minute, the topology's unless the environment says otherwise", () => {
    expect(readProber(template({ Prober: prober(), Schedule: rule("rate(1 minute)") }))).toEqual({
      callsPerMinute: ENDPOINT_PROBER.callsPerRun,
    });
    const six = template({ Prober: prober({ PROBE_CALLS_PER_RUN: "6" }), Schedule: rule("rate(1 minute)") });
    expect(readProber(six)).toEqual({ callsPerMinute: 6 });
  });

  it("is absent without a function, or with no enabled rule that runs it", () => {
    expect(readProber(template({ Schedule: rule("rate(1 minute)") }))).toBeUndefined();
    expect(readProber(template({ Prober: prober() }))).toBeUndefined();
    const disabled = template({ Prober: prober(), Schedule: rule("rate(1 minute)", "Prober", "DISABLED") });
    expect(readProber(disabled)).toBeUndefined();
  });

  it("refuses two probers, and a schedule the simulation does not model, by name", () => {
    const two = template({ Prober: prober(), Other: prober(), Schedule: rule("rate(1 minute)") });
    expect(() => readProber(two)).toThrow(TemplateShapeError);
    expect(() => readProber(two)).toThrow(/expected one endpoint prober, found 2/);
    const slow = template({ Prober: prober(), Schedule: rule("rate(5 minutes)") });
    expect(() => readProber(slow)).toThrow(/every minute, not every 300 s/);
  });
});
