/**
 * The endpoint prober in a template (issue 42, item 3): the function whose `PROBED_ENDPOINT_NAME`
 * names the real-time endpoint, the rule that runs it on a rate schedule, and the calls it makes
 * a minute while a deployment's new fleet bakes. A template without one (earlier releases) has
 * none: the deployment simulation then sends only the upstream calls.
 */
import { ENDPOINT_PROBER } from "../../../shared/domain/topology/prober.ts";
import { TemplateShapeError } from "../errors.ts";
import { at, type CfnTemplate, envNumber, referencedIds } from "./template.ts";
import { rateSeconds } from "./template-follower.ts";

/** The prober as the deployment simulation runs it. */
export interface ProberShape {
  /** Known items sent a minute (one run) while the new fleet bakes. */
  readonly callsPerMinute: number;
}

/** The template's prober, if it has one. */
export function readProber(template: CfnTemplate): ProberShape | undefined {
  const probers = template
    .ofType("AWS::Lambda::Function")
    .filter((f) => at(f.properties, "Environment.Variables.PROBED_ENDPOINT_NAME") !== undefined);
  if (probers.length === 0) return undefined;
  if (probers.length > 1)
    throw new TemplateShapeError(
      "template",
      "PROBED_ENDPOINT_NAME",
      `expected one endpoint prober, found ${probers.length}`,
    );
  const fn = probers[0]!;
  const periods = template
    .ofType("AWS::Events::Rule")
    .filter((r) => r.properties.State !== "DISABLED" && referencedIds(r.properties.Targets).has(fn.id))
    .map((r) => rateSeconds(r.properties.ScheduleExpression))
    .filter((p): p is number => p !== undefined);
  // A prober no rule runs sends nothing: the simulation has it absent.
  if (periods.length === 0) return undefined;
  if (Math.min(...periods) !== 60)
    throw new TemplateShapeError(
      `AWS::Lambda::Function ${fn.id}`,
      "AWS::Events::Rule",
      `the deployment simulation runs the prober every minute, not every ${Math.min(...periods)} s`,
    );
  const env = at(fn.properties, "Environment.Variables") as Record<string, unknown> | undefined;
  return { callsPerMinute: envNumber(fn, env, "PROBE_CALLS_PER_RUN", ENDPOINT_PROBER.callsPerRun) };
}
