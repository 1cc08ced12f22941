/**
 * The shape every target function shares: an SQS queue that an EventBridge rule fills, consumed
 * in batches with partial failures (Powertools batch), each message an EventBridge event whose
 * detail carries the pipeline's stable `eventId`. A message that fails returns to the queue and,
 * after the receive limit, goes to the queue's dead-letter queue, from where `decide replay`
 * can redrive it. Counts each outcome as a metric under the function's service name; an event
 * that does not match its decision record is refused, counted as `event_mismatch` and alarmed.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import { EventBridgeEnvelope } from "@aws-lambda-powertools/parser/envelopes/eventbridge";
import type { SQSRecord } from "aws-lambda";
import { decisionMadeSchema } from "../../shared/domain/contracts/events.ts";
import { EventRecordMismatchError } from "../../shared/domain/errors.ts";
import { METRICS } from "../../shared/domain/topology.ts";
import type { DecisionMadeDetail } from "../../shared/use-cases/event-authority.ts";
import { lazy } from "./lazy.ts";
import { sqsBatchHandler } from "./sqs-batch-handler.ts";

/** The outcome of an event refused because it does not match its record (a metric of that name). */
export const EVENT_MISMATCH = METRICS.eventMismatch;

/** Outcomes every target has besides its own. */
export type EventOutcome = typeof EVENT_MISMATCH;

/** Options of {@link createEventQueueHandler}. */
export interface EventQueueHandlerOptions<D, O extends string> {
  /** The `service` dimension of the function's logs and metrics. */
  readonly serviceName: string;
  readonly dependencies: () => Promise<D>;
  /** Applies one event at most once; its outcome is counted as the metric `<outcome>`. */
  readonly apply: (detail: DecisionMadeDetail, deps: D) => Promise<O>;
  /** Observes each outcome (tests and the local mode count effects with it). */
  readonly onOutcome?: (detail: DecisionMadeDetail, outcome: O | EventOutcome) => void;
}

/** Builds the handler of a target function fed by an SQS queue of EventBridge events. */
export function createEventQueueHandler<D, O extends string>(options: EventQueueHandlerOptions<D, O>) {
  const logger = new Logger({ serviceName: options.serviceName });
  const metrics = new Metrics({ namespace: METRICS.namespace, serviceName: options.serviceName, logger });
  const resolved = lazy(options.dependencies);
  async function recordHandler(record: SQSRecord): Promise<void> {
    // The EventBridge envelope and the "Decision Made" detail, checked by Powertools Parser: a
    // message that is not one fails here, is retried and then dead-lettered, never half-applied.
    const detail = EventBridgeEnvelope.parse(JSON.parse(record.body), decisionMadeSchema);
    let outcome: O | EventOutcome;
    try {
      outcome = await options.apply(detail, await resolved());
    } catch (error) {
      if (!(error instanceof EventRecordMismatchError)) throw error;
      // Refused for good: retrying cannot make it match. Counted (the mismatch alarm), logged
      // with both sides, consumed.
      outcome = EVENT_MISMATCH;
      logger.error("event does not match its decision record: not applied", {
        itemId: error.itemId,
        policyId: error.policyId,
        why: error.message,
        event: error.event,
        record: error.record,
        source: (JSON.parse(record.body) as { source?: unknown }).source,
      });
    }
    options.onOutcome?.(detail, outcome);
    metrics.addMetric(outcome, MetricUnit.Count, 1);
    if (outcome !== EVENT_MISMATCH)
      logger.info("event applied", { itemId: detail.itemId, eventId: detail.eventId, outcome });
  }
  return sqsBatchHandler(recordHandler, { logger, metrics });
}
