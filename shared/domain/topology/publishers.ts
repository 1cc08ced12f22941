/**
 * Which detail types each of the pipeline's publishing functions may put on its bus: the ones its
 * code sends, and no other. The bus grants each function's role PutEvents only for these (under
 * the pipeline's source), so a role that is taken over (the internet-facing review page's, say)
 * cannot speak for another: it cannot put a "Decision Made" the auto-action would act on, nor an
 * "Item Actioned" a consumer would trust. A function's name is the one the CDK app gives it (as in
 * `TABLE_ACCESS`).
 */
import { DetailType, type DetailTypeName } from "../events.ts";

const decisions = [DetailType.made, DetailType.rejected] as const;
const labels = [DetailType.reviewed, DetailType.revised] as const;

/** The detail types each publishing function sends, by its name in the CDK app. */
export const PUBLISHED_DETAIL_TYPES = {
  /** The decide path: its decision or rejection (and the same again when owed). */
  Decide: decisions,
  AsyncSubmit: decisions,
  AsyncResults: decisions,
  /** The auto-action target: the action it applied. */
  AutoAction: [DetailType.actioned],
  /** The review API and pages: a label given, changed or undone. */
  Review: labels,
  ReviewPage: labels,
  /** The batch files step: a batch's files written, and rewritten with its labels. */
  BatchFiles: [DetailType.batchCompleted, DetailType.batchReviewed],
  Drift: [DetailType.drift],
  Recalibrate: [DetailType.calibrationProposed],
} as const satisfies Record<string, readonly DetailTypeName[]>;

/** The name of a function that publishes on the bus. */
export type PublisherName = keyof typeof PUBLISHED_DETAIL_TYPES;

/** The detail types `name` may put, or undefined for a function that publishes none. */
export function publishedDetailTypes(name: string): readonly DetailTypeName[] | undefined {
  return Object.hasOwn(PUBLISHED_DETAIL_TYPES, name)
    ? PUBLISHED_DETAIL_TYPES[name as PublisherName]
    : undefined;
}
