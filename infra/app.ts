/**
 * The CDK app: `npm run synth` (offline, no credentials) or `npx cdk deploy`. Context values:
 * instanceType, initialInstanceCount, maxInstanceCount, imageUri, alarmEmail
 * (e.g. `npx cdk deploy -c instanceType=ml.g5.xlarge`).
 */
import { App, Aspects } from "aws-cdk-lib";
import { AwsSolutionsChecks, ServerlessChecks } from "cdk-nag";
import { DecisionStack } from "./decision-stack.ts";

const app = new App();
const context = (key: string): string | undefined => app.node.tryGetContext(key);
const number = (key: string): number | undefined =>
  context(key) === undefined ? undefined : Number(context(key));
new DecisionStack(app, context("stackName") ?? "DecisionPipeline", {
  description:
    "decision-pipeline: LLM decision endpoint on SageMaker and its SQS/Lambda/DynamoDB/EventBridge pipeline",
  ...(context("instanceType") ? { instanceType: context("instanceType") } : {}),
  ...(number("initialInstanceCount") ? { initialInstanceCount: number("initialInstanceCount") } : {}),
  ...(number("maxInstanceCount") ? { maxInstanceCount: number("maxInstanceCount") } : {}),
  ...(context("imageUri") ? { imageUri: context("imageUri") } : {}),
  ...(context("alarmEmail") ? { alarmEmail: context("alarmEmail") } : {}),
});
// AWS Solutions and Serverless checks on every synth: errors fail it; every suppression carries its reason.
Aspects.of(app).add(new AwsSolutionsChecks({ verbose: true }));
Aspects.of(app).add(new ServerlessChecks({ verbose: true }));
app.synth();
