/**
 * An EventBridge rule on the pipeline's bus whose target is an SQS queue, as the Solutions
 * Constructs' `EventbridgeToSqs` pattern builds it: the pattern and description from the
 * topology, bounded retries and maximum event age (`RULE_DELIVERY`), and a dead-letter queue of
 * its own for the events the bus could not deliver, so a replay can deliver each undelivered
 * event to the target of the rule that dropped it.
 */
import { Duration } from "aws-cdk-lib";
import * as events from "aws-cdk-lib/aws-events";
import * as targets from "aws-cdk-lib/aws-events-targets";
import type * as sqs from "aws-cdk-lib/aws-sqs";
import { Construct } from "constructs";
import type { RuleDelivery } from "../../shared/domain/dead-letters.ts";
import type { EventPattern } from "../../shared/domain/event-pattern.ts";
import { RULE_DELIVERY, RULES, type RuleName } from "../../shared/domain/topology.ts";
import { createDeadLetterQueue } from "./pipeline-queues.ts";

/** Converts a pattern in EventBridge's JSON form to the CDK's. */
export function toCdkPattern(pattern: EventPattern): events.EventPattern {
  const { "detail-type": detailType, ...rest } = pattern as Record<string, unknown>;
  return { ...rest, ...(detailType ? { detailType } : {}) } as events.EventPattern;
}

/** Properties of {@link RuleToQueue}. */
export interface RuleToQueueProps {
  readonly bus: events.IEventBus;
  /** Which of the topology's rules. */
  readonly rule: RuleName;
  readonly queue: sqs.IQueue;
  /** What is sent: the whole event, or its detail (the input path `$.detail`). @default "event" */
  readonly deliver?: RuleDelivery;
}

/** The rule (the construct's default child, so its logical id is the construct's) and its target. */
export class RuleToQueue extends Construct {
  public readonly rule: events.Rule;
  /** The events the bus could not deliver to the queue. */
  public readonly deadLetters: sqs.Queue;
  /** The rule's target queue, and what it delivers there (a replay delivers its dead letters alike). */
  public readonly target: sqs.IQueue;
  public readonly deliver: RuleDelivery;

  constructor(scope: Construct, id: string, props: RuleToQueueProps) {
    super(scope, id);
    this.deadLetters = createDeadLetterQueue(this, "DeadLetters");
    this.target = props.queue;
    this.deliver = props.deliver ?? "event";
    this.rule = new events.Rule(this, "Default", {
      eventBus: props.bus,
      description: RULES[props.rule].description,
      eventPattern: toCdkPattern(RULES[props.rule].pattern),
      targets: [
        new targets.SqsQueue(props.queue, {
          deadLetterQueue: this.deadLetters,
          retryAttempts: RULE_DELIVERY.retryAttempts,
          maxEventAge: Duration.hours(RULE_DELIVERY.maxEventAgeHours),
          ...(this.deliver === "detail" ? { message: events.RuleTargetInput.fromEventPath("$.detail") } : {}),
        }),
      ],
    });
  }
}
