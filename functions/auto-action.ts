/**
 * The auto-action function: consumes the auto-action queue that the `auto` rule fills (durable,
 * retried, with its own dead-letter queue that `decide replay` can redrive) and applies each
 * confident decision at most once by its event id (`applyDecision`), emitting "Item Actioned".
 * It applies what the decision record says, and only for the event that record stands for.
 */
import { METRICS } from "../shared/domain/topology.ts";
import { type ApplyOutcome, applyDecision } from "../shared/use-cases/apply-decision.ts";
import type { DecisionMadeDetail } from "../shared/use-cases/event-authority.ts";
import { type SharedDependencies, sharedDependencies } from "./support/dependencies.ts";
import { createEventQueueHandler, type EventOutcome } from "./support/event-queue-handler.ts";

/** The handler for given dependencies; `onOutcome` lets tests and the local mode count effects. */
export function createAutoActionHandler(
  dependencies: () => Promise<Pick<SharedDependencies, "store" | "publisher" | "policies" | "now">>,
  onOutcome?: (detail: DecisionMadeDetail, outcome: ApplyOutcome | EventOutcome) => void,
) {
  return createEventQueueHandler({
    serviceName: METRICS.service.autoAction,
    dependencies,
    apply: applyDecision,
    ...(onOutcome ? { onOutcome } : {}),
  });
}

/** The Lambda entry point. */
export const handler = createAutoActionHandler(() => sharedDependencies());
