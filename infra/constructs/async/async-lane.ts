/**
 * The async lane's functions and queues around the async endpoint (`async-endpoint.ts`):
 *
 * - the submit function on the batch lane's queue (and the intake's, when the live lane runs on
 *   the async endpoint too): its event source gathers up to an object's worth of records
 *   (`asyncItemsPerObject`, from the measured seconds per item) for up to 30 s, and the function
 *   writes the objects under `async/input/` and `async/items/` and calls InvokeEndpointAsync;
 * - the notifications queue (`async-notifications.ts`, created with the pipeline's queues),
 *   subscribed to the endpoint's success and error topics (raw delivery: the body is SageMaker's
 *   notification), dead-lettered after the receive limit;
 * - the result function on that queue, one notification per invocation, which reads the items and
 *   the answers and decides on the decide path: the table, the bus, batch progress, and the lane's
 *   queues for items submitted again or dead-lettered.
 *
 * The functions are the pipeline's (its factory, its scope): same runtime, bundling, findings.
 */
import * as iam from "aws-cdk-lib/aws-iam";
import type { NodejsFunction } from "aws-cdk-lib/aws-lambda-nodejs";
import * as subscriptions from "aws-cdk-lib/aws-sns-subscriptions";
import type * as sqs from "aws-cdk-lib/aws-sqs";
import { Construct } from "constructs";
import { tierEndpointsVariable } from "../../../shared/adapters/endpoints-by-model.ts";
import { asyncItemsPerObject } from "../../../shared/domain/async/async-objects.ts";
import { FUNCTION_ENV } from "../../../shared/domain/function-env.ts";
import {
  asyncSubmitMapping,
  EVENT_SOURCE_MAPPINGS,
} from "../../../shared/domain/topology/event-source-mapping.ts";
import { ASYNC_LANE, DECIDE_FUNCTION, TABLE_ACCESS } from "../../../shared/domain/topology.ts";
import { grantObjects } from "../bucket-access.ts";
import type { DecisionPipeline } from "../decision-pipeline.ts";
import type { TierModel } from "../endpoint/tier-models.ts";
import { QueueConsumer } from "../queue-consumer.ts";
import type { AsyncDecisionEndpoint } from "./async-endpoint.ts";

/** Properties of {@link AsyncLane}. */
export interface AsyncLaneProps {
  readonly pipeline: DecisionPipeline;
  readonly endpoint: AsyncDecisionEndpoint;
  /** The live intake runs on the async endpoint too (`-c endpointMode=async`). @default false */
  readonly intake?: boolean;
  /**
   * Where a cascade's later models are asked (the real-time endpoint that serves them beside the
   * first, `-c tierModels`): the result function asks them for the items the object's first model
   * passed on, as the decide function does. @default none: no later tier is asked in this lane
   */
  readonly laterTiers?: {
    readonly endpointName: string;
    readonly endpointArn: string;
    readonly tierModels: readonly TierModel[];
  };
}

/** The submit and result functions, the notifications queue and its dead-letter queue. */
export class AsyncLane extends Construct {
  public readonly submitFunction: NodejsFunction;
  public readonly resultsFunction: NodejsFunction;
  public readonly notifications: sqs.Queue;
  public readonly notificationsDeadLetters: sqs.Queue;
  /** Records per submit invocation: one object's worth. */
  public readonly itemsPerObject: number;
  /** The live intake's queue, where the live lane runs on the async endpoint too (`-c endpointMode=async`). */
  public readonly intakeQueue: sqs.IQueue | undefined;

  constructor(scope: Construct, id: string, props: AsyncLaneProps) {
    super(scope, id);
    this.itemsPerObject = asyncItemsPerObject();
    this.intakeQueue = props.intake ? props.pipeline.queues.intake : undefined;
    const queues = props.pipeline.asyncNotifications;
    if (!queues) throw new Error('the async lane needs a pipeline built with batchLane "async"');
    this.notifications = queues.queue;
    this.notificationsDeadLetters = queues.deadLetters;
    for (const topic of [props.endpoint.successTopic, props.endpoint.errorTopic])
      topic.addSubscription(
        // A notification SNS cannot deliver joins the ones the result function could not settle.
        new subscriptions.SqsSubscription(this.notifications, {
          rawMessageDelivery: true,
          deadLetterQueue: this.notificationsDeadLetters,
        }),
      );
    const environment = this.environment(props);
    this.submitFunction = this.submit(props, environment);
    this.resultsFunction = this.results(props, environment);
  }

  /**
   * What both functions read: the endpoint and its maximum instance count (the submit step's
   * hold-back hands SageMaker no more than that many instances answer within the request TTL; a
   * failed object is invoked again from the result function), the bucket, the lanes' queues.
   */
  private environment(props: AsyncLaneProps): Record<string, string> {
    const { queues, bucket } = props.pipeline;
    return {
      [FUNCTION_ENV.ASYNC_ENDPOINT_NAME]: props.endpoint.endpointName,
      [FUNCTION_ENV.ASYNC_MAX_INSTANCES]: String(props.endpoint.maxInstanceCount),
      [FUNCTION_ENV.BATCH_BUCKET]: bucket.bucketName,
      [FUNCTION_ENV.BATCH_QUEUE_URL]: queues.batch.queueUrl,
      [FUNCTION_ENV.BATCH_DLQ_URL]: queues.batchDeadLetters.queueUrl,
      [FUNCTION_ENV.PUBLISH_LEASE_MS]: String(DECIDE_FUNCTION.publishLeaseMs),
      ...(props.intake
        ? {
            [FUNCTION_ENV.INTAKE_QUEUE_ARN]: queues.intake.queueArn,
            [FUNCTION_ENV.INTAKE_QUEUE_URL]: queues.intake.queueUrl,
            [FUNCTION_ENV.INTAKE_DLQ_URL]: queues.deadLetters.queueUrl,
          }
        : {}),
    };
  }

  /** The submit function on the lanes' queues; it may write the lane's objects and invoke the endpoint. */
  private submit(props: AsyncLaneProps, environment: Record<string, string>): NodejsFunction {
    const { pipeline, endpoint } = props;
    const source = (queue: sqs.IQueue) => ({ queue, ...asyncSubmitMapping(this.itemsPerObject) });
    const fn = new QueueConsumer(pipeline, "AsyncSubmit", {
      fn: pipeline.functionFactory,
      file: "async-submit.ts",
      settings: {
        memoryMiB: ASYNC_LANE.submit.memoryMiB,
        timeoutSeconds: ASYNC_LANE.submit.timeoutSeconds,
        environment,
        tableAccess: TABLE_ACCESS.AsyncSubmit,
      },
      sources: [source(pipeline.queues.batch), ...(props.intake ? [source(pipeline.queues.intake)] : [])],
    }).function;
    grantObjects(pipeline.bucket, fn, ASYNC_LANE.prefixes.input, { write: true });
    grantObjects(pipeline.bucket, fn, ASYNC_LANE.prefixes.items, { write: true });
    fn.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ["sagemaker:InvokeEndpointAsync"],
        resources: [endpoint.endpointArn],
      }),
    );
    // An item that cannot be parsed is rejected at once, on the decide path.
    this.decidePath(fn, props);
    return fn;
  }

  /** The result function on the notifications queue. */
  private results(props: AsyncLaneProps, environment: Record<string, string>): NodejsFunction {
    const { pipeline, endpoint } = props;
    const fn = new QueueConsumer(pipeline, "AsyncResults", {
      fn: pipeline.functionFactory,
      file: "async-results.ts",
      settings: {
        memoryMiB: ASYNC_LANE.results.memoryMiB,
        timeoutSeconds: ASYNC_LANE.results.timeoutSeconds,
        environment,
        tableAccess: TABLE_ACCESS.AsyncResults,
      },
      sources: [{ queue: this.notifications, ...EVENT_SOURCE_MAPPINGS.asyncResults }],
    }).function;
    grantObjects(pipeline.bucket, fn, ASYNC_LANE.prefixes.items, { read: true });
    grantObjects(pipeline.bucket, fn, ASYNC_LANE.prefixes.output, { read: true });
    if (props.laterTiers) this.askLaterTiers(fn, props.laterTiers);
    // A failed object is invoked again from here.
    fn.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ["sagemaker:InvokeEndpointAsync"],
        resources: [endpoint.endpointArn],
      }),
    );
    // Items submitted again go back to their lane; dead letters to its dead-letter queue.
    const { queues } = pipeline;
    for (const queue of props.intake
      ? [queues.batch, queues.batchDeadLetters, queues.intake, queues.deadLetters]
      : [queues.batch, queues.batchDeadLetters])
      queue.grantSendMessages(fn);
    this.decidePath(fn, props);
    return fn;
  }

  /** The result function asks a cascade's later models of the real-time endpoint, one try per item. */
  private askLaterTiers(fn: NodejsFunction, tiers: NonNullable<AsyncLaneProps["laterTiers"]>): void {
    fn.addEnvironment(FUNCTION_ENV.DECISION_ENDPOINT_NAME, tiers.endpointName);
    fn.addEnvironment(
      FUNCTION_ENV.TIER_ENDPOINTS,
      tierEndpointsVariable(
        tiers.tierModels.map((m) => m.name),
        tiers.endpointName,
      ),
    );
    // One try: an item whose later tier is busy goes back to its lane counting no failure.
    fn.addEnvironment(FUNCTION_ENV.ENDPOINT_ATTEMPTS, "1");
    fn.addToRolePolicy(
      new iam.PolicyStatement({ actions: ["sagemaker:InvokeEndpoint"], resources: [tiers.endpointArn] }),
    );
  }

  /** The decide path's needs: the bus, and the batch files step's queue (a batch's last item asks for its files). */
  private decidePath(fn: NodejsFunction, props: AsyncLaneProps): void {
    const { pipeline } = props;
    pipeline.bus.grantPutEventsTo(fn);
    const files = pipeline.deadLetterSources["batch-files"].home!;
    fn.addEnvironment(FUNCTION_ENV.BATCH_FILES_QUEUE_URL, files.queueUrl);
    files.grantSendMessages(fn);
  }
}
