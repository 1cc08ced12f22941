/**
 * A function fed by SQS queues, as the Solutions Constructs' `SqsToLambda` pattern builds it from
 * an existing queue: one event source mapping per queue, with partial batch failures (only the
 * failed messages come back), a batch size, an optional batching window and maximum concurrency.
 * The queues themselves, with their dead-letter queues and visibility timeouts, are created in one
 * place (`pipeline-queues.ts`) so that their redrive settings read together. A mapping's shape is
 * plain data (`shared/domain/topology/event-source-mapping.ts`) that the local mode's poller reads
 * too.
 */
import { Duration } from "aws-cdk-lib";
import { SqsEventSource } from "aws-cdk-lib/aws-lambda-event-sources";
import type { NodejsFunction } from "aws-cdk-lib/aws-lambda-nodejs";
import type * as sqs from "aws-cdk-lib/aws-sqs";
import { Construct } from "constructs";
import type { EventSourceMapping } from "../../shared/domain/topology/event-source-mapping.ts";
import type { FunctionFactory, FunctionSettings } from "./pipeline-function.ts";

/** One queue a consumer reads, and the mapping's shape. */
export interface ConsumerSource extends EventSourceMapping {
  readonly queue: sqs.IQueue;
}

/** The CDK event source of a mapping: its shape, with partial batch failures as every mapping here. */
export function eventSourceOf(source: ConsumerSource): SqsEventSource {
  return new SqsEventSource(source.queue, {
    batchSize: source.batchSize,
    ...(source.maxBatchingWindowSeconds !== undefined
      ? { maxBatchingWindow: Duration.seconds(source.maxBatchingWindowSeconds) }
      : {}),
    reportBatchItemFailures: true,
    ...(source.maxConcurrency !== undefined ? { maxConcurrency: source.maxConcurrency } : {}),
  });
}

/** Properties of {@link QueueConsumer}. */
export interface QueueConsumerProps {
  /** Creates the function; it becomes this construct's default child, named after the construct's id. */
  readonly fn: FunctionFactory;
  /** The handler's file under `functions/`. */
  readonly file: string;
  readonly settings: FunctionSettings;
  readonly sources: readonly ConsumerSource[];
}

/** The function and its event source mappings. */
export class QueueConsumer extends Construct {
  public readonly function: NodejsFunction;
  /** The event sources, one per queue, in the order given. */
  public readonly sources: SqsEventSource[] = [];

  constructor(scope: Construct, id: string, props: QueueConsumerProps) {
    super(scope, id);
    this.function = props.fn(id, props.file, props.settings, this);
    for (const source of props.sources) this.addSource(source);
  }

  /** Feeds the function from one more queue; returns its event source. */
  addSource(source: ConsumerSource): SqsEventSource {
    const eventSource = eventSourceOf(source);
    this.function.addEventSource(eventSource);
    this.sources.push(eventSource);
    return eventSource;
  }
}
