/**
 * The endpoint prober, run every minute: while a blue/green deployment's new fleet bakes it sends
 * the real-time endpoint a few known items (`shared/use-cases/probe-endpoint.ts`) and publishes
 * the calls, the replies and the answers; the deployment's "silent" rollback alarm reads the
 * replies, so a healthy fleet deployed in a quiet hour is judged on calls the product made itself.
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import { Metrics, MetricUnit } from "@aws-lambda-powertools/metrics";
import { logMetrics } from "@aws-lambda-powertools/metrics/middleware";
import { captureLambdaHandler } from "@aws-lambda-powertools/tracer/middleware";
import middy from "@middy/core";
import { SageMakerDecisionEndpoint } from "../shared/adapters/decision-endpoint.ts";
import { SageMakerFleet } from "../shared/adapters/sagemaker-fleet.ts";
import { FUNCTION_ENV } from "../shared/domain/function-env.ts";
import { PolicyRegistry } from "../shared/domain/policy/registry.ts";
import { ENDPOINT_PROBER } from "../shared/domain/topology/prober.ts";
import { METRICS } from "../shared/domain/topology.ts";
import { type ProbeEndpointDependencies, probeEndpoint } from "../shared/use-cases/probe-endpoint.ts";
import { sagemakerClient, sagemakerControlClient } from "./support/clients.ts";
import { positiveNumber, requireEnv } from "./support/config.ts";
import { BUNDLED_POLICIES } from "./support/dependencies.ts";
import { lazy } from "./support/lazy.ts";
import { tracer } from "./support/tracing.ts";

const logger = new Logger({ serviceName: ENDPOINT_PROBER.service });

/**
 * The prober's dependencies from the environment: PROBED_ENDPOINT_NAME, PROBE_CALLS_PER_RUN,
 * PROBE_POLICY (a policy id; the first bundled policy by default) and POLICIES_DIR.
 */
export async function proberFromEnv(
  env: NodeJS.ProcessEnv = process.env,
): Promise<ProbeEndpointDependencies> {
  const name = requireEnv(FUNCTION_ENV.PROBED_ENDPOINT_NAME, env);
  const policies = await PolicyRegistry.fromFolder(env[FUNCTION_ENV.POLICIES_DIR] || BUNDLED_POLICIES);
  const id = env[FUNCTION_ENV.PROBE_POLICY] || policies.ids()[0];
  const policy = id === undefined ? undefined : policies.current(id);
  if (!policy) throw new Error(`the prober has no policy ${id ?? "at all"} to send its known items under`);
  return {
    fleet: new SageMakerFleet(sagemakerControlClient(env), name),
    endpoint: new SageMakerDecisionEndpoint(sagemakerClient(env), name, {
      timeoutMs: ENDPOINT_PROBER.callTimeoutMs,
      attempts: 1,
      baseDelayMs: 0,
    }),
    policy,
    calls: positiveNumber(FUNCTION_ENV.PROBE_CALLS_PER_RUN, ENDPOINT_PROBER.callsPerRun, env),
    itemIdPrefix: ENDPOINT_PROBER.itemIdPrefix,
  };
}

/** The handler for given dependencies. */
export function createProbeEndpointHandler(
  dependencies: () => Promise<ProbeEndpointDependencies>,
  metrics = new Metrics({ namespace: METRICS.namespace, serviceName: ENDPOINT_PROBER.service, logger }),
) {
  const resolved = lazy(dependencies);
  async function lambdaHandler(): Promise<unknown> {
    const run = await probeEndpoint(await resolved());
    const names = ENDPOINT_PROBER.metrics;
    metrics.addMetric(names.calls, MetricUnit.Count, run.calls);
    metrics.addMetric(names.replies, MetricUnit.Count, run.replies);
    metrics.addMetric(names.answers, MetricUnit.Count, run.answers);
    if (run.failures.length > 0)
      logger.warn("the endpoint left probe calls unanswered while its new fleet bakes", {
        calls: run.calls,
        replies: run.replies,
        failures: run.failures,
      });
    return run;
  }
  return middy(lambdaHandler)
    .use(captureLambdaHandler(tracer))
    .use(injectLambdaContext(logger))
    .use(logMetrics(metrics));
}

/** The Lambda entry point. */
export const handler = createProbeEndpointHandler(() => proberFromEnv());
