/**
 * The audit function, run daily: estimates each policy's rate of wrong automatic actions from
 * its audit samples of the last `AUDIT_WINDOW_DAYS` days and publishes the estimate, its upper
 * bound and the labels it rests on (metrics `AutoErrorRate`, `AutoErrorUpperBound`,
 * `AuditLabels`, dimension `policy`). The per-policy alarm fires when the upper bound passes the
 * policy's `maxAutoError`. A policy without an audit label publishes only its label count.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import { parser } from "@aws-lambda-powertools/parser/middleware";
import { EventBridgeSchema } from "@aws-lambda-powertools/parser/schemas/eventbridge";
import { captureLambdaHandler } from "@aws-lambda-powertools/tracer/middleware";
import middy from "@middy/core";
import type { z } from "zod";
import { AUDIT, METRICS } from "../shared/domain/topology.ts";
import { estimateAutoErrors, windowStart } from "../shared/use-cases/audit-estimate.ts";
import { positiveInteger } from "./config.ts";
import { type SharedDependencies, sharedDependencies } from "./dependencies.ts";
import { tracer } from "./tracing.ts";

const logger = new Logger({ serviceName: METRICS.service.audit });

type ScheduledEvent = z.infer<typeof EventBridgeSchema>;

/** The handler for given dependencies. */
export function createAuditHandler(
  dependencies: () => Promise<Pick<SharedDependencies, "store" | "policies">>,
  metrics = new Metrics({ namespace: METRICS.namespace, serviceName: METRICS.service.audit, logger }),
) {
  let resolved: ReturnType<typeof dependencies> | undefined;
  const windowDays = positiveInteger("AUDIT_WINDOW_DAYS", AUDIT.windowDays);
  async function lambdaHandler(event: ScheduledEvent): Promise<unknown> {
    resolved ??= dependencies();
    const audits = await estimateAutoErrors(await resolved, {
      since: windowStart(new Date(event.time), windowDays),
    });
    for (const audit of audits) {
      const { overall } = audit;
      // Single metrics, flushed at once: the policy is a dimension of these metrics only.
      const values: [string, (typeof MetricUnit)[keyof typeof MetricUnit], number][] = [
        [METRICS.auditLabels, MetricUnit.Count, overall.labelled],
      ];
      if (overall.labelled > 0)
        values.push(
          [METRICS.autoErrorRate, MetricUnit.NoUnit, overall.rate],
          [METRICS.autoErrorUpperBound, MetricUnit.NoUnit, overall.interval[1]],
        );
      for (const [name, unit, value] of values) {
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
