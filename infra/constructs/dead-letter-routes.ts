/**
 * The ways home of the pipeline's dead letters, as deployed: each dead-letter queue with the
 * queue its letters came from or the rule target queue their events go to (`shared/domain/dead-letters.ts`),
 * written as the routes the replay function, the stack output and `decide replay --from` read,
 * and the replay function with exactly the permissions those routes need.
 */
import { Stack } from "aws-cdk-lib";
import * as iam from "aws-cdk-lib/aws-iam";
import type { NodejsFunction } from "aws-cdk-lib/aws-lambda-nodejs";
import type * as sqs from "aws-cdk-lib/aws-sqs";
import type { Construct } from "constructs";
import type { DeadLetterRoutes, DeadLetterSource, RuleDelivery } from "../../shared/domain/dead-letters.ts";
import { FUNCTION_ENV } from "../../shared/domain/function-env.ts";
import { TABLE_ACCESS } from "../../shared/domain/topology.ts";
import type { FunctionFactory } from "./pipeline-function.ts";

/** One dead-letter queue and its letters' home: the queue they came from, or a rule's target. */
export interface DeadLetterHome {
  readonly queue: sqs.Queue;
  /** The queue the letters came from (a queue's own dead letters). */
  readonly home?: sqs.Queue;
  /** The rule's target queue and what the rule delivers to it (a rule's undelivered events). */
  readonly ruleTarget?: { readonly queue: sqs.IQueue; readonly deliver: RuleDelivery };
}

/** The dead-letter sources only some stacks have (the async lane's notifications, with -c batchLane=async). */
export type OptionalDeadLetterSource = "async-results";

/** Every dead-letter source of a stack and its way home; the optional ones where the stack has them. */
export type DeadLetterSources = Record<Exclude<DeadLetterSource, OptionalDeadLetterSource>, DeadLetterHome> &
  Partial<Record<OptionalDeadLetterSource, DeadLetterHome>>;

/** The routes as the replay function, the stack output and `decide replay --from` read them. */
export function deadLetterRoutesOf(sources: DeadLetterSources): DeadLetterRoutes {
  return Object.fromEntries(
    (Object.entries(sources) as [string, DeadLetterHome][]).map(([source, { queue, home, ruleTarget }]) => [
      source,
      {
        dlqUrl: queue.queueUrl,
        ...(home ? { queueUrl: home.queueUrl } : {}),
        ...(ruleTarget ? { queueUrl: ruleTarget.queue.queueUrl, deliver: ruleTarget.deliver } : {}),
      },
    ]),
  );
}

/**
 * The operator's replay function: reads every dead-letter queue and sends letters home (to their
 * queue, by re-send or SQS's redrive, or their events to the rule's target queue, each checked
 * against its decision record), per `DEAD_LETTER_ROUTES`.
 */
export function replayFunction(
  scope: Construct,
  fn: FunctionFactory,
  sources: DeadLetterSources,
): NodejsFunction {
  const replay = fn("Replay", "replay.ts", {
    memoryMiB: 256,
    timeoutSeconds: 300,
    environment: {
      [FUNCTION_ENV.DEAD_LETTER_ROUTES]: Stack.of(scope).toJsonString(deadLetterRoutesOf(sources)),
    },
    tableAccess: TABLE_ACCESS.Replay,
  });
  for (const { queue, home, ruleTarget } of Object.values(sources) as DeadLetterHome[]) {
    queue.grantConsumeMessages(replay);
    if (home) {
      home.grantSendMessages(replay);
      replay.addToRolePolicy(
        new iam.PolicyStatement({ actions: ["sqs:StartMessageMoveTask"], resources: [queue.queueArn] }),
      );
    }
    ruleTarget?.queue.grantSendMessages(replay);
  }
  return replay;
}
