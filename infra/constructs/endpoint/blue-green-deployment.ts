/**
 * How an update of the real-time endpoint deploys: blue/green, a canary of half the new fleet
 * first, then all the traffic, each stage baking long enough for every rollback alarm's whole
 * window, and any of them firing rolls the traffic back. Apart from decision-endpoint.ts, which
 * creates the endpoint's resources, because the deployment is a concept of its own: its stages,
 * how long they bake, how long two fleets overlap (which the health alarms allow for) and the
 * alarms it listens to (the new fleet's own, `deployment-guardrail.ts`, and the decide function's
 * endpoint failures, which the stack passes once that alarm exists).
 */
import { ArnFormat, Stack, Token } from "aws-cdk-lib";
import type * as cloudwatch from "aws-cdk-lib/aws-cloudwatch";
import * as iam from "aws-cdk-lib/aws-iam";
import type * as sagemaker from "aws-cdk-lib/aws-sagemaker";
import { bakingSecondsFor, ENDPOINT_DEPLOYMENT, ON_CALL_ALARMS } from "../../../shared/domain/topology.ts";
import { alarmNameOf } from "../operations/alarm-topic.ts";
import { guardrailWindows } from "./deployment-guardrail.ts";

/**
 * Seconds each stage of a deployment bakes (the canary, then all the traffic): the longest
 * window of the guardrail's alarms and the decide function's endpoint-failure alarm, with the
 * margin the topology gives.
 */
export function deploymentBakingSeconds(): number {
  const { periodSeconds, evaluationPeriods } = ON_CALL_ALARMS.endpointFailures;
  return bakingSecondsFor(Math.max(periodSeconds * evaluationPeriods, ...guardrailWindows()));
}

/**
 * Seconds a deployment may run two fleets under one variant's name (the new one starting, then
 * baking beside the old through both stages): their instances' metrics add up meanwhile.
 */
export function deploymentOverlapSecondsOf(): number {
  return ENDPOINT_DEPLOYMENT.containerStartupSeconds + 2 * deploymentBakingSeconds();
}

/**
 * Deploys every update of `endpoint` blue/green, rolling back on any of `alarms`; `role` (the
 * endpoint's execution role) is allowed to read their state.
 */
export function deployBlueGreen(
  endpoint: sagemaker.CfnEndpoint,
  role: iam.Role,
  alarms: readonly cloudwatch.Alarm[],
): void {
  const bakingSeconds = deploymentBakingSeconds();
  // SageMaker reads the alarms' state with the endpoint's execution role. By name, not by a
  // reference: the new fleet's alarms follow the configuration, whose model needs this role.
  const names = alarms.map((alarm) => {
    const resource = alarm.node.defaultChild as cloudwatch.CfnAlarm;
    if (resource.alarmName === undefined || Token.isUnresolved(resource.alarmName))
      resource.alarmName = alarmNameOf(alarm);
    // The alarms watch the new configuration before the endpoint starts deploying it.
    endpoint.node.addDependency(alarm);
    return resource.alarmName;
  });
  role.addToPolicy(
    new iam.PolicyStatement({
      actions: ["cloudwatch:DescribeAlarms"],
      resources: names.map((name) =>
        Stack.of(endpoint).formatArn({
          service: "cloudwatch",
          resource: "alarm",
          resourceName: name,
          arnFormat: ArnFormat.COLON_RESOURCE_NAME,
        }),
      ),
    }),
  );
  endpoint.deploymentConfig = {
    blueGreenUpdatePolicy: {
      trafficRoutingConfiguration: {
        type: "CANARY",
        canarySize: { type: "CAPACITY_PERCENT", value: ENDPOINT_DEPLOYMENT.canaryCapacityPercent },
        waitIntervalInSeconds: bakingSeconds,
      },
      terminationWaitInSeconds: bakingSeconds,
      maximumExecutionTimeoutInSeconds: ENDPOINT_DEPLOYMENT.maximumExecutionSeconds,
    },
    autoRollbackConfiguration: { alarms: names.map((alarmName) => ({ alarmName })) },
  };
}
