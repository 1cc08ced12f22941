/**
 * The pipeline's scheduled functions: the review backlog metrics every five minutes, the daily drift check ("Calibration Drift") and the daily
 * recalibration, which turns the labels reviewers gave since each policy version was calibrated
 * into a proposed next version with its report under `calibration/` in the pipeline bucket
 * ("Calibration Proposed"). Both are invoked asynchronously by their schedule: bounded retries,
 * and a run that keeps failing lands in the targets' dead-letter queue (with its alarm).
 */
import { Duration } from "aws-cdk-lib";
import * as events from "aws-cdk-lib/aws-events";
import * as targets from "aws-cdk-lib/aws-events-targets";
import * as destinations from "aws-cdk-lib/aws-lambda-destinations";
import type { NodejsFunction } from "aws-cdk-lib/aws-lambda-nodejs";
import type * as s3 from "aws-cdk-lib/aws-s3";
import type * as sqs from "aws-cdk-lib/aws-sqs";
import { Construct } from "constructs";
import { FUNCTION_ENV } from "../../shared/domain/function-env.ts";
import { RECALIBRATION, TABLE_ACCESS } from "../../shared/domain/topology.ts";
import { grantObjects } from "./bucket-access.ts";
import type { functionFactory } from "./pipeline-function.ts";

/** Properties of {@link ScheduledJobs}. */
export interface ScheduledJobsProps {
  /** Creates the functions in the pipeline's scope (their ids stay `Pipeline<Name>`). */
  readonly fn: ReturnType<typeof functionFactory>;
  readonly bus: events.IEventBus;
  readonly bucket: s3.IBucket;
  /** Where failed runs land. */
  readonly failures: sqs.IQueue;
}

/** The review backlog metrics, the drift check and the recalibration, each on its schedule. */
export class ScheduledJobs extends Construct {
  /** Publishes each policy's review backlog every five minutes (the service-level alarms' metrics). */
  public readonly reviewBacklogFunction: NodejsFunction;
  public readonly driftFunction: NodejsFunction;
  public readonly recalibrateFunction: NodejsFunction;

  constructor(scope: Construct, id: string, props: ScheduledJobsProps) {
    super(scope, id);
    // A daily job may retry twice within six hours; the five-minute metrics job never retries
    // (the next run is five minutes away).
    const schedule = (
      name: string,
      description: string,
      fn: NodejsFunction,
      every: Duration,
      retries: number,
    ) => {
      fn.configureAsyncInvoke({
        retryAttempts: retries,
        maxEventAge: retries > 0 ? Duration.hours(6) : every,
        onFailure: new destinations.SqsDestination(props.failures),
      });
      new events.Rule(this, `${name}Schedule`, {
        description,
        schedule: events.Schedule.rate(every),
        targets: [
          new targets.LambdaFunction(fn, { retryAttempts: retries, deadLetterQueue: props.failures }),
        ],
      });
    };
    const daily = (name: string, description: string, fn: NodejsFunction) => {
      props.bus.grantPutEventsTo(fn);
      schedule(name, description, fn, Duration.days(1), 2);
    };

    this.reviewBacklogFunction = props.fn("ReviewBacklog", "review-backlog.ts", {
      memoryMiB: 256,
      timeoutSeconds: 60,
      tableAccess: TABLE_ACCESS.ReviewBacklog,
    });
    schedule(
      "ReviewBacklog",
      "Review backlog metrics (pending items, oldest wait) every five minutes",
      this.reviewBacklogFunction,
      Duration.minutes(5),
      0,
    );

    this.driftFunction = props.fn("Drift", "drift.ts", {
      memoryMiB: 512,
      timeoutSeconds: 300,
      environment: { [FUNCTION_ENV.DRIFT_PERIOD_HOURS]: "24" },
      tableAccess: TABLE_ACCESS.Drift,
    });
    daily("Drift", "Daily calibration drift check", this.driftFunction);

    this.recalibrateFunction = props.fn("Recalibrate", "recalibrate.ts", {
      memoryMiB: 1024,
      timeoutSeconds: 300,
      environment: {
        [FUNCTION_ENV.PROPOSALS_BUCKET]: props.bucket.bucketName,
        [FUNCTION_ENV.PROPOSALS_PREFIX]: RECALIBRATION.prefix,
        [FUNCTION_ENV.RECALIBRATION_MIN_LABELS]: String(RECALIBRATION.minLabels),
      },
      tableAccess: TABLE_ACCESS.Recalibrate,
    });
    // Lists and reads (to find an earlier proposal) and writes proposals under its prefix; never deletes.
    grantObjects(props.bucket, this.recalibrateFunction, RECALIBRATION.prefix, {
      read: true,
      write: true,
      list: true,
    });
    daily("Recalibrate", "Daily recalibration proposal from reviewers' labels", this.recalibrateFunction);
  }
}
