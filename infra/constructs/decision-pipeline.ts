/**
 * The event-driven pipeline: the queues (`pipeline-queues.ts`), the decisions table, the event
 * bus with its rules (auto → auto-action queue, human → review queue, rejected → inspection
 * queue, upstream "Decision Requested" → intake) and the target functions on their queues
 * (`rule-targets.ts`), the decide function (`decide-function.ts`; none when the live lane runs on
 * the async endpoint), the review pages and API, the replay function, the scheduled jobs and the
 * batch lane, with least-privilege permissions. Settings come from `shared/domain/topology.ts`,
 * shared with the local stand-ins.
 */
import { Aspects, Stack } from "aws-cdk-lib";
import type * as dynamodb from "aws-cdk-lib/aws-dynamodb";
import type { SqsEventSource } from "aws-cdk-lib/aws-lambda-event-sources";
import type { NodejsFunction } from "aws-cdk-lib/aws-lambda-nodejs";
import type * as s3 from "aws-cdk-lib/aws-s3";
import { Construct } from "constructs";
import { decideConcurrency } from "../../shared/domain/capacity-plan.ts";
import { FUNCTION_ENV } from "../../shared/domain/function-env.ts";
import {
  MEASURED_SECONDS_PER_ITEM,
  METRICS,
  RESERVED_CONCURRENCY,
  type RuleName,
  TABLE_ACCESS,
} from "../../shared/domain/topology.ts";
import { type AsyncNotificationQueues, asyncNotificationQueues } from "./async/async-notifications.ts";
import { BatchJobs } from "./batch-jobs.ts";
import { type BatchLane, DEFAULT_BATCH_LANE, refuseAsyncLiveLaneWithRealtimeBatch } from "./batch-lane.ts";
import { CapacityFollower } from "./capacity-follower.ts";
import { type DeadLetterSources, replayFunction } from "./dead-letter-routes.ts";
import { deadLetterSourcesOf } from "./dead-letter-sources.ts";
import { createDecideFunction } from "./decide-function.ts";
import { DecisionsTable } from "./decisions-table.ts";
import type { TierModel } from "./endpoint/tier-models.ts";
import { PipelineBucket } from "./pipeline-bucket.ts";
import { PipelineBus } from "./pipeline-bus.ts";
import { type FunctionFactory, FunctionFindings, functionFactory } from "./pipeline-function.ts";
import { createPipelineQueues, type PipelineQueues } from "./pipeline-queues.ts";
import { ReviewAccess } from "./review-access.ts";
import { routeRules, targetFunctions } from "./rule-targets.ts";
import type { RuleToQueue } from "./rule-to-queue.ts";
import { ScheduledJobs } from "./scheduled-jobs.ts";

/** Properties of {@link DecisionPipeline}. */
export interface DecisionPipelineProps {
  /** Name of the SageMaker endpoint the decide function calls (none with endpointMode "async"). */
  readonly endpointName?: string;
  /** Its ARN: InvokeEndpoint is allowed on this endpoint only (none with endpointMode "async"). */
  readonly endpointArn?: string;
  /** Fewest endpoint instances (the scaling minimum). @default 1 */
  readonly endpointMinInstances?: number;
  /** Most endpoint instances; the decide function's concurrency follows. @default 1 */
  readonly endpointMaxInstances?: number;
  /**
   * Serverless endpoints cold-start: the decide function then waits longer per try. "async": the
   * live lane runs on the async endpoint too, so the pipeline has no decide function, no capacity
   * follower and no real-time endpoint to call; the stack's async lane consumes the intake.
   * @default "realtime"
   */
  readonly endpointMode?: "realtime" | "serverless" | "async";
  /** Where the policy files are bundled from. @default events/policies */
  readonly policiesDir?: string;
  /** Concurrent batch-lane invocations of the decide function. @default BATCH_LANE.maxConcurrency */
  readonly batchMaxConcurrency?: number;
  /**
   * Who consumes the batch lane's queue: the decide function (real-time calls), or the async
   * lane's submit function, which the stack adds (`async-lane.ts`). @default DEFAULT_BATCH_LANE
   */
  readonly batchLane?: BatchLane;
  /** Prefix of the reviewers' hosted sign-in domain. @default derived from the account and stack */
  readonly reviewDomainPrefix?: string;
  /** Reserve concurrency for the sign-in, authorizer and review functions (`RESERVED_CONCURRENCY`). @default true */
  readonly reserveConcurrency?: boolean;
  /** A cascade's later models the endpoint serves (`tier-models.ts`): the decide function asks them. @default none */
  readonly tierModels?: readonly TierModel[];
}

/** The pipeline's functions, by role. */
export interface PipelineFunctions {
  /** The live (and real-time batch) lane's consumer; none when the live lane runs on the async endpoint. */
  readonly decide?: NodejsFunction;
  readonly autoAction: NodejsFunction;
  /** The human route's consumer: queues each escalated item for review once per event id. */
  readonly reviewIntake: NodejsFunction;
  /** The review API. */
  readonly review: NodejsFunction;
  readonly reviewPage: NodejsFunction;
  readonly reviewAuthorizer: NodejsFunction;
  readonly reviewSignIn: NodejsFunction;
  readonly replay: NodejsFunction;
  readonly drift: NodejsFunction;
  /** Proposes recalibrated policy versions from reviewers' labels, daily. */
  readonly recalibrate: NodejsFunction;
  /** Publishes each policy's review backlog every five minutes (the service-level alarms' metrics). */
  readonly reviewBacklog: NodejsFunction;
  /** Reads batch files dropped under `incoming/`. */
  readonly batchIntake: NodejsFunction;
  /** Writes each batch's results and errors files, on a message its completion sends. */
  readonly batchFiles: NodejsFunction;
  /** Holds the intake's concurrency to the endpoint's instances in service (real-time only). */
  readonly capacityFollower?: NodejsFunction;
  /** Calls the endpoint with known items while a deployment's new fleet bakes (beside the follower). */
  readonly endpointProber?: NodejsFunction;
}

/** Everything between the upstream systems and the endpoint's decisions. */
export class DecisionPipeline extends Construct {
  public readonly queues: PipelineQueues;
  public readonly table: dynamodb.Table;
  /** The table's global secondary indexes, by name. */
  public readonly tableIndexNames: readonly string[];
  public readonly bus: PipelineBus;
  /** Calibration proposals (`calibration/`) and batch files. */
  public readonly bucket: s3.Bucket;
  public readonly functions: PipelineFunctions;
  /** Sign-in, the HTTP API and its authorizer in front of the review pages and API. */
  public readonly reviewAccess: ReviewAccess;
  /** The bus's rules into their queues, each with its dead-letter queue. */
  public readonly rules: Record<RuleName, RuleToQueue>;
  /** Every dead-letter queue, by source, and where its letters go home. */
  public readonly deadLetterSources: DeadLetterSources;
  /** The async lane's notifications queue and its dead-letter queue (batch lane "async" only). */
  public readonly asyncNotifications: AsyncNotificationQueues | undefined;
  /** Creates a function as the pipeline's own (runtime, bundling, log group, table grants). */
  public readonly functionFactory: FunctionFactory;

  constructor(scope: Construct, id: string, props: DecisionPipelineProps) {
    super(scope, id);
    refuseAsyncLiveLaneWithRealtimeBatch(props.endpointMode, props.batchLane);
    this.queues = createPipelineQueues(this);
    const decisions = new DecisionsTable(this, "Decisions");
    this.table = decisions.table;
    this.tableIndexNames = decisions.indexNames;
    this.bus = new PipelineBus(this, "Bus", { eventBusName: `${Stack.of(this).stackName}-decisions` });
    const fn = functionFactory(this, {
      table: this.table,
      environment: {
        [FUNCTION_ENV.DECISIONS_TABLE]: this.table.tableName,
        [FUNCTION_ENV.EVENT_BUS_NAME]: this.bus.eventBusName,
        [FUNCTION_ENV.POLICIES_DIR]: "/var/task/policies",
        POWERTOOLS_METRICS_NAMESPACE: METRICS.namespace,
        POWERTOOLS_LOG_LEVEL: "INFO",
      },
      ...(props.policiesDir ? { policiesDir: props.policiesDir } : {}),
      ...(props.reserveConcurrency === false ? { reserveConcurrency: false } : {}),
    });
    this.functionFactory = fn;
    // Sized for the real-time or serverless decide function; with endpointMode "async" there is
    // none, and the async lane sizes its own mappings from the object size.
    const concurrency = decideConcurrency({
      mode: props.endpointMode === "serverless" ? "serverless" : "realtime",
      minInstances: props.endpointMinInstances ?? 1,
      maxInstances: props.endpointMaxInstances ?? 1,
      ...(props.batchMaxConcurrency ? { batchMaxConcurrency: props.batchMaxConcurrency } : {}),
    });
    const decideLane = this.decideFunction(fn, props, concurrency);
    const decide = decideLane?.decide;
    const targets = targetFunctions(this, fn, this.bus, this.queues);
    const { review, reviewPage, access } = this.reviewFunctions(fn, props);
    this.reviewAccess = access;

    this.bucket = new PipelineBucket(this, "Files").bucket;
    const failures = this.queues.jobFailures;
    const jobs = new ScheduledJobs(this, "Jobs", { fn, bus: this.bus, bucket: this.bucket, failures });
    const batchJobs = new BatchJobs(this, "BatchJobs", {
      fn,
      bucket: this.bucket,
      queue: this.queues.batch,
      bus: this.bus,
      ...(decide ? { decideFunction: decide } : {}),
      reviewFunctions: [review, reviewPage],
      failures,
      maxConcurrency: concurrency.batch,
      batchSize: concurrency.batchSize,
      batchLane: props.batchLane ?? DEFAULT_BATCH_LANE,
    });
    this.rules = routeRules(this, this.bus, this.queues);
    this.asyncNotifications =
      (props.batchLane ?? DEFAULT_BATCH_LANE) === "async" ? asyncNotificationQueues(this) : undefined;
    this.deadLetterSources = deadLetterSourcesOf(this, batchJobs);
    this.functions = {
      ...(decide ? { decide } : {}),
      ...targets,
      review,
      reviewPage,
      reviewAuthorizer: this.reviewAccess.authorizerFunction,
      reviewSignIn: this.reviewAccess.signInFunction,
      replay: replayFunction(this, fn, this.deadLetterSources),
      drift: jobs.driftFunction,
      recalibrate: jobs.recalibrateFunction,
      reviewBacklog: jobs.reviewBacklogFunction,
      batchIntake: batchJobs.intakeFunction,
      batchFiles: batchJobs.filesFunction,
      ...(decideLane ? this.capacityFollower(fn, props, decideLane.intakeSource) : {}),
    };
    // The decide function dead-letters an item that keeps failing itself (overload does not
    // count), into the dead-letter queue each of its queues' redrive policy names.
    if (decide)
      for (const queue of [this.queues.intake, this.queues.batch])
        queue.deadLetterQueue?.queue.grantSendMessages(decide);
    Aspects.of(this).add(new FunctionFindings());
  }

  /** The capacity follower of a real-time endpoint (a serverless one has no instances to follow). */
  private capacityFollower(
    fn: FunctionFactory,
    props: DecisionPipelineProps,
    mapping: SqsEventSource,
  ): { capacityFollower?: NodejsFunction; endpointProber?: NodejsFunction } {
    if (props.endpointMode === "serverless" || !props.endpointName || !props.endpointArn) return {};
    const { endpointName, endpointArn } = props;
    const [intake, failures] = [this.queues.intake, this.queues.jobFailures];
    const secondsPerItem = MEASURED_SECONDS_PER_ITEM.fresh;
    const follower = { fn, endpointName, endpointArn, intake, mapping, secondsPerItem, failures };
    const created = new CapacityFollower(this, "Follower", follower);
    return { capacityFollower: created.function, endpointProber: created.prober.function };
  }

  /** The review API and pages, reached only through the authorized HTTP API of {@link ReviewAccess}. */
  private reviewFunctions(fn: FunctionFactory, props: DecisionPipelineProps) {
    const review = fn("Review", "review.ts", {
      memoryMiB: 256,
      timeoutSeconds: 30,
      tableAccess: TABLE_ACCESS.Review,
      reservedConcurrency: RESERVED_CONCURRENCY.review,
    });
    this.bus.grantPutEventsTo(review);
    // The review pages, reached (with the review API) only through the authorized HTTP API.
    const reviewPage = fn("ReviewPage", "review-page.ts", {
      memoryMiB: 256,
      timeoutSeconds: 30,
      tableAccess: TABLE_ACCESS.ReviewPage,
      reservedConcurrency: RESERVED_CONCURRENCY.reviewPage,
    });
    this.bus.grantPutEventsTo(reviewPage);
    const access = new ReviewAccess(this, "ReviewAccess", {
      pageFunction: reviewPage,
      apiFunction: review,
      fn,
      ...(props.reviewDomainPrefix ? { domainPrefix: props.reviewDomainPrefix } : {}),
    });
    return { review, reviewPage, access };
  }

  /**
   * The decide function on the intake queue, or none when the live lane runs on the async endpoint:
   * it would have no endpoint to call (the result function decides those items on the same path),
   * and a replayed letter goes back to the intake, which the submit function reads.
   */
  private decideFunction(
    fn: FunctionFactory,
    props: DecisionPipelineProps,
    concurrency: { readonly intake: number; readonly batchSize: number },
  ) {
    if (props.endpointMode === "async") return undefined;
    const { endpointName, endpointArn } = props;
    if (!endpointName || !endpointArn)
      throw new Error("the decide function needs endpointName and endpointArn (all but endpointMode async)");
    const mode = props.endpointMode ?? "realtime";
    const { queues, bus } = this;
    return createDecideFunction(this, fn, {
      endpointName,
      endpointArn,
      mode,
      intake: queues.intake,
      bus,
      concurrency,
      tierModels: props.tierModels ?? [],
    });
  }
}
