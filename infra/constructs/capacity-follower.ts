/**
 * The capacity follower (`functions/follow-capacity.ts`), run every minute and on each of the
 * endpoint's deployment state changes: the intake mapping's concurrency follows the instances in
 * service (Lambda's SQS pollers do not slow down when the handler refuses items, so they are held
 * to what the fleet admits), and the figures the endpoint's scaling and rollback alarms read are
 * published. It may describe the one endpoint, read and update the one mapping, read the intake's
 * depth and write the one readings item of the table. The endpoint prober (`endpoint-prober.ts`)
 * runs beside it, and an alarm on its own heartbeat says when it stops (`followerStaleAlarm`).
 */
import { Duration } from "aws-cdk-lib";
import * as cloudwatch from "aws-cdk-lib/aws-cloudwatch";
import * as events from "aws-cdk-lib/aws-events";
import * as targets from "aws-cdk-lib/aws-events-targets";
import * as iam from "aws-cdk-lib/aws-iam";
import * as destinations from "aws-cdk-lib/aws-lambda-destinations";
import type { SqsEventSource } from "aws-cdk-lib/aws-lambda-event-sources";
import type { NodejsFunction } from "aws-cdk-lib/aws-lambda-nodejs";
import type * as sqs from "aws-cdk-lib/aws-sqs";
import { Construct } from "constructs";
import { FUNCTION_ENV } from "../../shared/domain/function-env.ts";
import { CAPACITY_FOLLOWER, METRICS, TABLE_ACCESS } from "../../shared/domain/topology.ts";
import { EndpointProber } from "./endpoint/endpoint-prober.ts";
import type { FunctionFactory } from "./pipeline-function.ts";

/** Properties of {@link CapacityFollower}. */
export interface CapacityFollowerProps {
  readonly fn: FunctionFactory;
  /** The real-time endpoint, by name and ARN. */
  readonly endpointName: string;
  readonly endpointArn: string;
  readonly intake: sqs.IQueue;
  /** The decide function's event source on the intake. */
  readonly mapping: SqsEventSource;
  /** Seconds one instance takes per item, as the stack was sized. */
  readonly secondsPerItem: number;
  /** Where a run that failed its retries lands. */
  readonly failures: sqs.IQueue;
}

/** The follower function and its two triggers, and the endpoint prober beside it. */
export class CapacityFollower extends Construct {
  public readonly function: NodejsFunction;
  /**
   * Calls the endpoint while a deployment's new fleet bakes: the silent rollback alarm reads the
   * follower's bake flag and the prober's replies together, so the two are deployed together.
   */
  public readonly prober: EndpointProber;

  constructor(scope: Construct, id: string, props: CapacityFollowerProps) {
    super(scope, id);
    this.function = props.fn("CapacityFollower", "follow-capacity.ts", {
      memoryMiB: 256,
      timeoutSeconds: 30,
      environment: {
        [FUNCTION_ENV.FOLLOWED_ENDPOINT_NAME]: props.endpointName,
        [FUNCTION_ENV.INTAKE_QUEUE_URL]: props.intake.queueUrl,
        [FUNCTION_ENV.INTAKE_MAPPING_UUID]: props.mapping.eventSourceMappingId,
        [FUNCTION_ENV.SECONDS_PER_ITEM]: String(props.secondsPerItem),
        [FUNCTION_ENV.CONCURRENCY_PER_INSTANCE]: String(CAPACITY_FOLLOWER.concurrencyPerInstance),
      },
      tableAccess: TABLE_ACCESS.CapacityFollower,
    });
    this.grant(props);
    // A run that fails is not retried: the next is a minute away.
    this.function.configureAsyncInvoke({
      retryAttempts: 0,
      maxEventAge: Duration.seconds(CAPACITY_FOLLOWER.periodSeconds),
      onFailure: new destinations.SqsDestination(props.failures),
    });
    const target = new targets.LambdaFunction(this.function, {
      retryAttempts: 0,
      deadLetterQueue: props.failures,
    });
    new events.Rule(this, "Schedule", {
      description: "The intake's concurrency follows the endpoint's instances in service, every minute",
      schedule: events.Schedule.rate(Duration.seconds(CAPACITY_FOLLOWER.periodSeconds)),
      targets: [target],
    });
    // Scaling and deployments change the instance count between two minutes: follow at once.
    new events.Rule(this, "OnDeployment", {
      description:
        "The intake's concurrency follows the endpoint's instances when a deployment or scaling changes them",
      eventPattern: {
        source: ["aws.sagemaker"],
        detailType: ["SageMaker Endpoint Deployment State Change"],
        detail: { EndpointName: [props.endpointName] },
      },
      targets: [target],
    });
    const { fn, endpointName, endpointArn, failures } = props;
    this.prober = new EndpointProber(this, "Prober", { fn, endpointName, endpointArn, failures });
  }

  /** The one endpoint, the one mapping, the intake's depth. */
  private grant(props: CapacityFollowerProps): void {
    this.function.addToRolePolicy(
      new iam.PolicyStatement({ actions: ["sagemaker:DescribeEndpoint"], resources: [props.endpointArn] }),
    );
    this.function.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ["lambda:GetEventSourceMapping", "lambda:UpdateEventSourceMapping"],
        resources: [props.mapping.eventSourceMappingArn],
      }),
    );
    this.function.addToRolePolicy(
      new iam.PolicyStatement({ actions: ["sqs:GetQueueAttributes"], resources: [props.intake.queueArn] }),
    );
  }
}

/**
 * The follower's own staleness (issue 42, item 4): the backlog scaling, the scale-in guard, the
 * pollers' limit and the silent rollback alarm all read its figures every minute, and without them
 * scaling stops without a word. Its heartbeat is the instances-in-service figure it publishes every
 * run (0 included); missing data breaches, so the alarm fires when no run has published for as
 * long as the decide side trusts a reading (`CAPACITY_FOLLOWER.staleAfterSeconds`).
 */
export function followerStaleAlarm(scope: Construct): cloudwatch.Alarm {
  const minutes = CAPACITY_FOLLOWER.staleAfterSeconds / 60;
  return new cloudwatch.Alarm(scope, "CapacityFollowerStale", {
    metric: new cloudwatch.Metric({
      namespace: METRICS.namespace,
      metricName: METRICS.follower.instancesInService,
      dimensionsMap: { service: METRICS.service.capacityFollower },
      statistic: "SampleCount",
      period: Duration.seconds(CAPACITY_FOLLOWER.periodSeconds),
    }),
    threshold: 1,
    comparisonOperator: cloudwatch.ComparisonOperator.LESS_THAN_THRESHOLD,
    evaluationPeriods: minutes,
    treatMissingData: cloudwatch.TreatMissingData.BREACHING,
    alarmDescription: `The capacity follower has published nothing for ${minutes} minutes: the endpoint's backlog scaling, the intake's concurrency and the deployment's silent alarm have no figures (see its log group and the job-failures queue)`,
  });
}
