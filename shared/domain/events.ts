/**
 * The pipeline's EventBridge events: one source, three detail types from the decide path, plus
 * the targets' own. Builders keep the detail shapes in one place.
 */

import { createHash } from "node:crypto";

/** The source of every event the pipeline publishes. */
export const EVENT_SOURCE = "decision-pipeline";

/** Detail types. */
export const DetailType = {
  requested: "Decision Requested",
  made: "Decision Made",
  rejected: "Decision Rejected",
  reviewed: "Decision Reviewed",
  revised: "Decision Review Revised",
  actioned: "Item Actioned",
  drift: "Calibration Drift",
  calibrationProposed: "Calibration Proposed",
  batchCompleted: "Batch Completed",
  batchReviewed: "Batch Reviewed",
} as const;
export type DetailTypeName = (typeof DetailType)[keyof typeof DetailType];

/**
 * The detail types only the pipeline's own functions may put on its bus, as they alone may put
 * the source {@link EVENT_SOURCE}: the bus's resource policy (`infra/constructs/pipeline-bus.ts`)
 * and the local bus refuse them from anyone else, under any source, since a consumer may act on
 * them. Left out: the upstream "Decision Requested", and the calibration notices an operator's
 * `decide calibrate --event-bus` also puts (under its own source, `decide.cli`).
 */
export const PIPELINE_DETAIL_TYPES: readonly DetailTypeName[] = Object.values(DetailType).filter(
  (type) =>
    !([DetailType.requested, DetailType.drift, DetailType.calibrationProposed] as string[]).includes(type),
);

/** One event to publish (the PutEvents entry without the bus name). */
export interface PipelineEvent {
  readonly detailType: DetailTypeName;
  /** The pipeline's own events carry `eventId` (see {@link pipelineEvent}); upstream items do not. */
  readonly detail: Record<string, unknown>;
  /** Stable readable key for logs (event kind, item id, policy version). */
  readonly eventKey: string;
  /** The source, when not the publisher's own (an upstream event put on the bus again by a replay). */
  readonly source?: string;
}

/** The stable id of an event: the same facts always give the same id. */
export function eventIdOf(eventKey: string): string {
  return createHash("sha256").update(eventKey).digest("hex").slice(0, 32);
}

/**
 * Builds an event whose detail carries a stable `eventId` derived from `eventKey`. Events go out
 * at least once (a crash between PutEvents and marking the record published sends the same
 * event again); every target applies an event at most once by this id.
 */
export function pipelineEvent(
  detailType: DetailTypeName,
  eventKey: string,
  detail: Record<string, unknown>,
): PipelineEvent {
  return { detailType, eventKey, detail: { eventId: eventIdOf(eventKey), ...detail } };
}

/** The event port: something that publishes pipeline events (EventBridge, the local bus, a test double). */
export interface PublishesEvents {
  publish(events: readonly PipelineEvent[]): Promise<void>;
}
