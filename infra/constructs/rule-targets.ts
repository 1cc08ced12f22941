/**
 * The bus's rules and what they reach, deployed: each rule into its queue (with a dead-letter
 * queue of its own, `rule-to-queue.ts`), and the two target functions (auto-action, review
 * intake) consuming theirs. Apart from decision-pipeline.ts, which composes the pipeline, because
 * what an event reaches is one concept (the local mode keeps it in one module as well,
 * `infra/local/bus-targets.ts`). Created in the pipeline's scope, so the ids stay the same.
 */
import type { Construct } from "constructs";
import type { RuleDelivery } from "../../shared/domain/dead-letters.ts";
import { EVENT_SOURCE_MAPPINGS } from "../../shared/domain/topology/event-source-mapping.ts";
import { type RuleName, TABLE_ACCESS, TARGET_FUNCTION } from "../../shared/domain/topology.ts";
import type { PipelineBus } from "./pipeline-bus.ts";
import type { FunctionFactory } from "./pipeline-function.ts";
import type { PipelineQueues } from "./pipeline-queues.ts";
import { QueueConsumer } from "./queue-consumer.ts";
import { RuleToQueue } from "./rule-to-queue.ts";

/** The bus's rules, each into its queue, each with its own dead-letter queue. */
export function routeRules(
  scope: Construct,
  bus: PipelineBus,
  queues: PipelineQueues,
): Record<RuleName, RuleToQueue> {
  const rule = (name: RuleName, queue: PipelineQueues["intake"], deliver?: RuleDelivery) =>
    new RuleToQueue(scope, `${name[0]!.toUpperCase()}${name.slice(1)}Rule`, {
      bus,
      rule: name,
      queue,
      ...(deliver ? { deliver } : {}),
    });
  return {
    auto: rule("auto", queues.autoAction),
    human: rule("human", queues.review),
    rejected: rule("rejected", queues.rejected),
    requested: rule("requested", queues.intake, "detail"),
  };
}

/** The rule targets' consumers: auto-action and review intake, each on its queue. */
export function targetFunctions(
  scope: Construct,
  fn: FunctionFactory,
  bus: PipelineBus,
  queues: PipelineQueues,
) {
  const consumer = (
    id: string,
    file: string,
    queue: PipelineQueues["review"],
    tableAccess: readonly string[],
  ) =>
    new QueueConsumer(scope, id, {
      fn,
      file,
      settings: {
        memoryMiB: TARGET_FUNCTION.memoryMiB,
        timeoutSeconds: TARGET_FUNCTION.timeoutSeconds,
        tableAccess,
      },
      sources: [{ queue, ...EVENT_SOURCE_MAPPINGS.target }],
    }).function;
  const autoAction = consumer("AutoAction", "auto-action.ts", queues.autoAction, TABLE_ACCESS.AutoAction);
  bus.grantPutEventsTo(autoAction);
  const reviewIntake = consumer("ReviewIntake", "review-intake.ts", queues.review, TABLE_ACCESS.ReviewIntake);
  return { autoAction, reviewIntake };
}
