/**
 * The auto-action function: consumes the auto-action queue that the `auto` rule fills (durable,
 * retried, with its own dead-letter queue that `decide replay` can redrive) and applies each
 * confident decision at most once by its event id (`applyDecision`), emitting "Item Actioned".
 */
import { METRICS } from "../shared/domain/topology.ts";
import {
  type ApplyOutcome,
  applyDecision,
  type DecisionMadeDetail,
} from "../shared/use-cases/apply-decision.ts";
import { type SharedDependencies, sharedDependencies } from "./dependencies.ts";
import { createEventQueueHandler } from "./event-queue-handler.ts";

/** The handler for given dependencies; `onOutcome` lets tests and the local mode count effects. */
export function createAutoActionHandler(
  dependencies: () => Promise<Pick<SharedDependencies, "store" | "publisher" | "now">>,
  onOutcome?: (detail: DecisionMadeDetail, outcome: ApplyOutcome) => void,
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
