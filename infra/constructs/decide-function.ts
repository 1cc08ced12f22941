/**
 * The decide function on the intake queue (the batch lane adds its own mapping when it runs on the
 * real-time endpoint), allowed to call the one real-time or serverless endpoint. A stack whose
 * live lane runs on the async endpoint (`endpointMode: "async"`) has none: see
 * `decision-pipeline.ts`.
 */
import * as iam from "aws-cdk-lib/aws-iam";
import type { SqsEventSource } from "aws-cdk-lib/aws-lambda-event-sources";
import type { NodejsFunction } from "aws-cdk-lib/aws-lambda-nodejs";
import type * as sqs from "aws-cdk-lib/aws-sqs";
import type { Construct } from "constructs";
import { tierEndpointsVariable } from "../../shared/adapters/endpoints-by-model.ts";
import { FUNCTION_ENV } from "../../shared/domain/function-env.ts";
import { decideIntakeMapping } from "../../shared/domain/topology/event-source-mapping.ts";
import { DECIDE_FUNCTION, SERVERLESS_DECIDE, TABLE_ACCESS } from "../../shared/domain/topology.ts";
import { endpointCallsWith, type TierModel } from "./endpoint/tier-models.ts";
import type { PipelineBus } from "./pipeline-bus.ts";
import type { FunctionFactory } from "./pipeline-function.ts";
import { QueueConsumer } from "./queue-consumer.ts";

/** What the decide function is built from. */
export interface DecideFunctionProps {
  /** Name of the SageMaker endpoint it calls. */
  readonly endpointName: string;
  /** Its ARN: InvokeEndpoint is allowed on this endpoint only. */
  readonly endpointArn: string;
  /** Serverless endpoints cold-start: the function then waits longer per try. */
  readonly mode: "realtime" | "serverless";
  readonly intake: sqs.IQueue;
  readonly bus: PipelineBus;
  /** Records per invocation and the intake mapping's concurrency (`decideConcurrency`). */
  readonly concurrency: { readonly intake: number; readonly batchSize: number };
  /** A cascade's later models the endpoint serves beside the first. */
  readonly tierModels: readonly TierModel[];
}

/** The decide function's endpoint settings: serverless endpoints cold-start, so each try may wait longer. */
function decideEnvironment(props: DecideFunctionProps): Record<string, string> {
  // Each later model is one more call per item within the same function timeout.
  const calls = endpointCallsWith(
    props.tierModels,
    props.mode === "serverless" ? SERVERLESS_DECIDE : DECIDE_FUNCTION,
  );
  return {
    [FUNCTION_ENV.DECISION_ENDPOINT_NAME]: props.endpointName,
    [FUNCTION_ENV.ENDPOINT_TIMEOUT_MS]: String(calls.timeoutMs),
    [FUNCTION_ENV.ENDPOINT_ATTEMPTS]: String(calls.attempts),
    [FUNCTION_ENV.PUBLISH_LEASE_MS]: String(DECIDE_FUNCTION.publishLeaseMs),
    // The later models the endpoint serves (-c tierModels), each answered by the endpoint itself;
    // a cascade's tier it does not serve is skipped, its items going to people as the tier before
    // left them.
    [FUNCTION_ENV.TIER_ENDPOINTS]: tierEndpointsVariable(
      props.tierModels.map((m) => m.name),
      props.endpointName,
    ),
  };
}

/**
 * The decide function in `scope` (its id stays `<scope>Decide`), and its intake event source,
 * whose concurrency the capacity follower moves.
 */
export function createDecideFunction(
  scope: Construct,
  fn: FunctionFactory,
  props: DecideFunctionProps,
): { decide: NodejsFunction; intakeSource: SqsEventSource } {
  const consumer = new QueueConsumer(scope, "Decide", {
    fn,
    file: "decide.ts",
    settings: {
      memoryMiB: DECIDE_FUNCTION.memoryMiB,
      timeoutSeconds: DECIDE_FUNCTION.timeoutSeconds,
      environment: decideEnvironment(props),
      tableAccess: TABLE_ACCESS.Decide,
    },
    sources: [{ queue: props.intake, ...decideIntakeMapping(props.concurrency) }],
  });
  const decide = consumer.function;
  decide.addToRolePolicy(
    new iam.PolicyStatement({ actions: ["sagemaker:InvokeEndpoint"], resources: [props.endpointArn] }),
  );
  props.bus.grantPutEventsTo(decide);
  return { decide, intakeSource: consumer.sources[0]! };
}
