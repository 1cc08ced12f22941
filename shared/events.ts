/**
 * The pipeline's EventBridge events: one source, three detail types from the decide path, plus
 * the targets' own. Builders keep the detail shapes in one place.
 */

/** The source of every event the pipeline publishes. */
export const EVENT_SOURCE = "decision-pipeline";

/** Detail types. */
export const DetailType = {
  requested: "Decision Requested",
  made: "Decision Made",
  rejected: "Decision Rejected",
  reviewed: "Decision Reviewed",
  actioned: "Item Actioned",
  drift: "Calibration Drift",
} as const;
export type DetailTypeName = (typeof DetailType)[keyof typeof DetailType];

/** One event to publish (the PutEvents entry without the bus name). */
export interface PipelineEvent {
  readonly detailType: DetailTypeName;
  readonly detail: Record<string, unknown>;
  /** Stable id for logs and deduplication downstream (item id, policy version, event kind). */
  readonly eventKey: string;
}
