/**
 * The retention of a SageMaker endpoint's log group, set without the stack owning the group.
 * SageMaker creates `/aws/sagemaker/Endpoints/<endpoint name>` itself (never expiring) the first
 * time an instance logs, so every deployment made before this stack named the group already has
 * it: an `AWS::Logs::LogGroup` of that name fails the first update with "already exists". CDK's
 * `LogRetention` custom resource instead creates the group when it is absent and puts the
 * retention either way (a first create, or an upgrade that adopts SageMaker's group); the group
 * outlives the stack, its events expiring after the retention.
 */
import { type CfnResource, Stack } from "aws-cdk-lib";
import * as lambda from "aws-cdk-lib/aws-lambda";
import * as logs from "aws-cdk-lib/aws-logs";
import { NagSuppressions } from "cdk-nag";
import type { Construct } from "constructs";

/** Days SageMaker's endpoint logs are kept. */
const LOG_RETENTION = logs.RetentionDays.ONE_MONTH;

/** CDK's logical id of its one log-retention function per stack. */
const PROVIDER_ID = "LogRetentionaae0aa3c5b4d4f87b02d85b201efdd8a";

/** SageMaker's log group of the endpoint `name`. */
export const endpointLogGroupName = (name: string): string => `/aws/sagemaker/Endpoints/${name}`;

/**
 * Sets a month's retention on the endpoint `name`'s log group, creating the group if SageMaker has
 * not yet; returns the custom resource, for the endpoint to depend on.
 * @example endpoint.node.addDependency(endpointLogRetention(this, "DecisionPipeline-ml-c6i-xlarge"));
 */
export function endpointLogRetention(scope: Construct, name: string): logs.LogRetention {
  const retention = new logs.LogRetention(scope, "LogRetention", {
    logGroupName: endpointLogGroupName(name),
    retention: LOG_RETENTION,
  });
  pinProvider(scope);
  return retention;
}

/**
 * The CDK's log-retention function (one per stack, its code the CDK's): on the project's runtime
 * (the CDK would pick the newest), its findings suppressed with their reasons; a repeat is harmless.
 */
function pinProvider(scope: Construct): void {
  const provider = Stack.of(scope).node.tryFindChild(PROVIDER_ID);
  if (!provider) throw new Error(`the CDK's log-retention function is not ${PROVIDER_ID} any more`);
  (provider.node.defaultChild as CfnResource).addPropertyOverride("Runtime", lambda.Runtime.NODEJS_22_X.name);
  const reason = (what: string) =>
    `The CDK's log-retention function (its code and settings are the CDK's): ${what}`;
  NagSuppressions.addResourceSuppressions(
    provider,
    [
      {
        id: "AwsSolutions-IAM4",
        reason: reason("AWSLambdaBasicExecutionRole only allows writing its own logs"),
        appliesTo: ["Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"],
      },
      {
        id: "AwsSolutions-IAM5",
        reason: reason("logs:PutRetentionPolicy and DeleteRetentionPolicy on the groups it is asked about"),
        appliesTo: ["Resource::*"],
      },
      {
        id: "AwsSolutions-L1",
        reason: reason("pinned to nodejs22.x, the runtime the project tests and supports"),
      },
      {
        id: "Serverless-LambdaLatestVersion",
        reason: reason("pinned to nodejs22.x, as every function of the project"),
      },
    ],
    true,
  );
}
