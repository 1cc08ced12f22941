/**
 * The endpoint prober (`functions/probe-endpoint.ts`, issue 42 item 3), run every minute: while a
 * blue/green deployment's new fleet bakes it calls the real-time endpoint with a few known items
 * and publishes the replies the "silent" rollback alarm reads (`deployment-guardrail.ts`); outside
 * a bake it only describes the endpoint. It may describe and invoke the one endpoint, nothing else
 * (no table, no bus, no queue but its failures').
 */
import { Duration } from "aws-cdk-lib";
import * as events from "aws-cdk-lib/aws-events";
import * as targets from "aws-cdk-lib/aws-events-targets";
import * as iam from "aws-cdk-lib/aws-iam";
import * as destinations from "aws-cdk-lib/aws-lambda-destinations";
import type { NodejsFunction } from "aws-cdk-lib/aws-lambda-nodejs";
import type * as sqs from "aws-cdk-lib/aws-sqs";
import { Construct } from "constructs";
import { FUNCTION_ENV } from "../../../shared/domain/function-env.ts";
import { ENDPOINT_PROBER } from "../../../shared/domain/topology/prober.ts";
import type { FunctionFactory } from "../pipeline-function.ts";

/** Properties of {@link EndpointProber}. */
export interface EndpointProberProps {
  readonly fn: FunctionFactory;
  /** The real-time endpoint, by name and ARN. */
  readonly endpointName: string;
  readonly endpointArn: string;
  /** Where a run that failed lands. */
  readonly failures: sqs.IQueue;
}

/** The prober function and the rule that runs it every minute. */
export class EndpointProber extends Construct {
  public readonly function: NodejsFunction;

  constructor(scope: Construct, id: string, props: EndpointProberProps) {
    super(scope, id);
    this.function = props.fn("EndpointProber", "probe-endpoint.ts", {
      memoryMiB: 256,
      timeoutSeconds: ENDPOINT_PROBER.timeoutSeconds,
      environment: {
        [FUNCTION_ENV.PROBED_ENDPOINT_NAME]: props.endpointName,
        [FUNCTION_ENV.PROBE_CALLS_PER_RUN]: String(ENDPOINT_PROBER.callsPerRun),
      },
      tableAccess: [],
    });
    this.function.addToRolePolicy(
      new iam.PolicyStatement({
        actions: ["sagemaker:DescribeEndpoint", "sagemaker:InvokeEndpoint"],
        resources: [props.endpointArn],
      }),
    );
    // A run that fails is not retried: the next is a minute away (and a missed minute counts as silent).
    this.function.configureAsyncInvoke({
      retryAttempts: 0,
      maxEventAge: Duration.seconds(ENDPOINT_PROBER.periodSeconds),
      onFailure: new destinations.SqsDestination(props.failures),
    });
    new events.Rule(this, "Schedule", {
      description:
        "Calls the real-time endpoint with known items while a deployment's new fleet bakes, every minute",
      schedule: events.Schedule.rate(Duration.seconds(ENDPOINT_PROBER.periodSeconds)),
      targets: [
        new targets.LambdaFunction(this.function, { retryAttempts: 0, deadLetterQueue: props.failures }),
      ],
    });
  }
}
