/**
 * The bus's rules and what they reach, run locally: the two target functions (auto-action, review
 * intake) behind their queues as deployed, each outcome told to a test's effect hook, and the
 * rules whose targets are plain queues (rejected items, requests into the intake). Its own module
 * because what an event reaches is one concept, apart from the order in which the wiring starts
 * the parts.
 */
import { MAX_RECEIVE_COUNT, METRICS, RULES } from "../../shared/domain/topology.ts";
import type { DecideDependencies } from "../../shared/use-cases/decide-message.ts";
import type { LocalEventBus } from "./event-bus.ts";
import { LOCAL_ARN, type LocalQueues, ruleDeadLetter } from "./local-queues.ts";
import { startTargetQueue, type TargetQueue, type TargetQueueOptions } from "./target-queue.ts";

/** What a test hears of the targets (the local mode leaves it unset). */
export interface TargetHooks {
  /**
   * Called each time a target applies an effect (an action, or a review task created), or refuses
   * an event that does not match its decision record.
   */
  readonly onEffect?: (effect: "actioned" | "queued" | "refused", itemId: string) => void;
}

/** The targets as deployed: rule → queue (dead letters after the receive limit) → function. */
export async function startTargets(parts: {
  createQueue: TargetQueueOptions["createQueue"];
  bus: LocalEventBus;
  queues: LocalQueues;
  baseDeps: DecideDependencies;
  hooks: TargetHooks;
  visibilitySeconds: number;
}) {
  const { hooks, baseDeps } = parts;
  const { createAutoActionHandler } = await import("../../functions/auto-action.ts");
  const { createReviewIntakeHandler } = await import("../../functions/review-intake.ts");
  const targetQueue = (name: string, rule: "auto" | "human", handler: TargetQueueOptions["handler"]) =>
    startTargetQueue({
      createQueue: parts.createQueue,
      bus: parts.bus,
      name,
      pattern: RULES[rule].pattern,
      handler,
      visibilityTimeoutSeconds: parts.visibilitySeconds,
      maxReceiveCount: MAX_RECEIVE_COUNT,
      ruleDeadLetter: ruleDeadLetter(parts.queues.ruleDeadLetters[rule], rule, `${LOCAL_ARN}:${name}`),
    });
  const running: TargetQueue[] = [];
  const stop = () => Promise.all(running.map((target) => target.poller.stop()));
  try {
    const autoAction = await targetQueue(
      "auto-action",
      "auto",
      createAutoActionHandler(
        async () => baseDeps,
        (detail, outcome) => effectOf(outcome, hooks, detail.itemId),
      ),
    );
    running.push(autoAction);
    const review = await targetQueue(
      "review",
      "human",
      createReviewIntakeHandler(
        async () => baseDeps,
        (detail, outcome) => effectOf(outcome, hooks, detail.itemId),
      ),
    );
    running.push(review);
    return { autoAction, review, stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** Reports a target's outcome to the effect hook: an action, a review task, or a refused event. */
function effectOf(outcome: string, hooks: TargetHooks, itemId: string): void {
  if (outcome === "actioned" || outcome === "queued") hooks.onEffect?.(outcome, itemId);
  else if (outcome === METRICS.eventMismatch) hooks.onEffect?.("refused", itemId);
}

/** The rules whose targets are plain queues: rejected items, and requests into the intake. */
export function addQueueRules(bus: LocalEventBus, queues: LocalQueues): void {
  const { intake, rejected, ruleDeadLetters } = queues;
  bus.addRule({
    name: "rejected",
    pattern: RULES.rejected.pattern,
    target: async (e) => void (await rejected.send(JSON.stringify(e))),
    deadLetter: ruleDeadLetter(ruleDeadLetters.rejected, "rejected", `${LOCAL_ARN}:rejected`),
  });
  bus.addRule({
    name: "requested",
    pattern: RULES.requested.pattern,
    target: async (e) => void (await intake.send(JSON.stringify(e.detail))),
    deadLetter: ruleDeadLetter(ruleDeadLetters.requested, "requested", `${LOCAL_ARN}:intake`),
  });
}
