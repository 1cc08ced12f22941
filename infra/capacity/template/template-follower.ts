/**
 * The capacity follower in a template: the function whose `INTAKE_MAPPING_UUID` references the
 * intake's event source mapping, the rule that runs it on a schedule, and the numbers it runs
 * with (batches per instance in service, the seconds per item its expected wait assumes). A
 * template without one (older stacks, serverless) has none: the mapping's concurrency is fixed.
 */
import { CAPACITY_FOLLOWER } from "../../../shared/domain/topology.ts";
import { TemplateShapeError } from "../errors.ts";
import type { FollowerShape } from "../shape.ts";
import { at, type CfnTemplate, envNumber, referencedId, referencedIds } from "./template.ts";

/** `rate(1 minute)`, `rate(5 minutes)`, `rate(30 seconds)` in seconds, else undefined. */
export function rateSeconds(expression: unknown): number | undefined {
  const match = /^rate\((\d+) (second|minute|hour)s?\)$/.exec(String(expression));
  if (!match) return undefined;
  return Number(match[1]) * { second: 1, minute: 60, hour: 3600 }[match[2] as "second" | "minute" | "hour"];
}

/** The follower of the intake mapping with logical id `mappingId`, if the template has one. */
export function readFollower(template: CfnTemplate, mappingId: string): FollowerShape | undefined {
  const followers = template
    .ofType("AWS::Lambda::Function")
    .filter((f) => referencedId(at(f.properties, "Environment.Variables.INTAKE_MAPPING_UUID")) === mappingId);
  if (followers.length === 0) return undefined;
  if (followers.length > 1)
    throw new TemplateShapeError(
      `AWS::Lambda::EventSourceMapping ${mappingId}`,
      "INTAKE_MAPPING_UUID",
      `expected one function following this mapping, found ${followers.length}`,
    );
  const fn = followers[0]!;
  const periods = template
    .ofType("AWS::Events::Rule")
    .filter((r) => referencedIds(r.properties.Targets).has(fn.id))
    .map((r) => rateSeconds(r.properties.ScheduleExpression))
    .filter((p): p is number => p !== undefined);
  if (periods.length === 0)
    throw new TemplateShapeError(
      `AWS::Lambda::Function ${fn.id}`,
      "AWS::Events::Rule",
      "follows the intake mapping but no rule runs it on a rate schedule",
    );
  const env = at(fn.properties, "Environment.Variables") as Record<string, unknown> | undefined;
  return {
    periodSeconds: Math.min(...periods),
    concurrencyPerInstance: envNumber(
      fn,
      env,
      "CONCURRENCY_PER_INSTANCE",
      CAPACITY_FOLLOWER.concurrencyPerInstance,
    ),
    maxConcurrency: CAPACITY_FOLLOWER.maxMappingConcurrency,
    secondsPerItem: envNumber(fn, env, "SECONDS_PER_ITEM", undefined),
  };
}
