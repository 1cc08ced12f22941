/**
 * The audit function, run daily: estimates each policy's rate of wrong automatic actions from
 * its audit samples of the last `AUDIT_WINDOW_DAYS` days and publishes the estimate, the labels
 * it rests on and, against the policy's `maxAutoError`, its verdict's bounds and state (metrics
 * `AutoErrorRate`, `AutoErrorLowerBound`, `AutoErrorUpperBound`, `AuditInconclusive`,
 * `AuditCoverage`, `AuditLabels`, dimension `policy`). One alarm per policy fires when the lower
 * bound passes the budget (over budget, with evidence), another while the labels are too few to
 * judge it (no label at all included).
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import { parser } from "@aws-lambda-powertools/parser/middleware";
import { EventBridgeSchema } from "@aws-lambda-powertools/parser/schemas/eventbridge";
import { captureLambdaHandler } from "@aws-lambda-powertools/tracer/middleware";
import middy from "@middy/core";
import type { z } from "zod";
import type { PolicyAudit } from "../shared/domain/audit/policy-audit.ts";
import { FUNCTION_ENV } from "../shared/domain/function-env.ts";
import { AUDIT, METRICS } from "../shared/domain/topology.ts";
import { estimateAutoErrors, windowStart } from "../shared/use-cases/audit-estimate.ts";
import { positiveInteger } from "./support/config.ts";
import { type SharedDependencies, sharedDependencies } from "./support/dependencies.ts";
import { tracer } from "./support/tracing.ts";

const logger = new Logger({ serviceName: METRICS.service.audit });

type ScheduledEvent = z.infer<typeof EventBridgeSchema>;

type Unit = (typeof MetricUnit)[keyof typeof MetricUnit];

/**
 * What one policy's audit publishes: its label count always; the rate once a label exists; and
 * where it sets a budget, the verdict's bounds (the over-budget alarm reads the lower one),
 * whether the labels are too few to judge (the inconclusive alarm), and the share of automatic
 * decisions they speak for. Without a budget, the upper end of the interval for the record.
 */
function metricsOf(audit: PolicyAudit): [string, Unit, number][] {
  const { overall, verdict } = audit;
  const values: [string, Unit, number][] = [[METRICS.auditLabels, MetricUnit.Count, overall.labelled]];
  if (overall.labelled > 0) values.push([METRICS.autoErrorRate, MetricUnit.NoUnit, overall.rate]);
  if (verdict)
    values.push(
      [METRICS.autoErrorLowerBound, MetricUnit.NoUnit, verdict.lower],
      [METRICS.autoErrorUpperBound, MetricUnit.NoUnit, verdict.upper],
      [METRICS.auditInconclusive, MetricUnit.Count, verdict.state === "not_enough_labels" ? 1 : 0],
      [METRICS.auditCoverage, MetricUnit.NoUnit, verdict.covered],
    );
  else if (overall.labelled > 0)
    values.push([METRICS.autoErrorUpperBound, MetricUnit.NoUnit, overall.interval[1]]);
  return values;
}

/** The handler for given dependencies. */
export function createAuditHandler(
  dependencies: () => Promise<Pick<SharedDependencies, "store" | "policies">>,
  metrics = new Metrics({ namespace: METRICS.namespace, serviceName: METRICS.service.audit, logger }),
) {
  let resolved: ReturnType<typeof dependencies> | undefined;
  const windowDays = positiveInteger(FUNCTION_ENV.AUDIT_WINDOW_DAYS, AUDIT.windowDays);
  async function lambdaHandler(event: ScheduledEvent): Promise<unknown> {
    resolved ??= dependencies();
    const now = new Date(event.time);
    const audits = await estimateAutoErrors(await resolved, { since: windowStart(now, windowDays), now });
    for (const audit of audits) {
      // Single metrics, flushed at once: the policy is a dimension of these metrics only.
      for (const [name, unit, value] of metricsOf(audit)) {
        const single = metrics.singleMetric();
        single.addDimension(METRICS.policyDimension, audit.policyId);
        single.addMetric(name, unit, value);
      }
    }
    const results = audits.map((a) => ({
      policyId: a.policyId,
      rate: a.overall.rate,
      interval: a.overall.interval,
      labelled: a.overall.labelled,
      target: a.target,
      verdict: a.verdict?.state,
      notes: a.notes,
    }));
    logger.info("audit estimate", { scheduledAt: event.time, results });
    return { results };
  }
  return middy(lambdaHandler)
    .use(captureLambdaHandler(tracer))
    .use(injectLambdaContext(logger))
    .use(parser({ schema: EventBridgeSchema }));
}

/** The Lambda entry point. */
export const handler = createAuditHandler(() => sharedDependencies());
