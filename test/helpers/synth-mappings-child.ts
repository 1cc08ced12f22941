/**
 * The stack's event source mappings, synthesized in a process of its own so that a test's worker
 * stays responsive while the CDK works (a synthesis holds its thread for tens of seconds, longer
 * than the test runner waits for a worker's answer). Prints the template's
 * AWS::Lambda::EventSourceMapping properties as JSON: the stack's props are the JSON argument.
 *
 *   node --import tsx test/helpers/synth-mappings-child.ts '{"batchLane":"realtime"}'
 */
import { App } from "aws-cdk-lib";
import { Template } from "aws-cdk-lib/assertions";
import { DecisionStack } from "../../infra/decision-stack.ts";

type Resource = { Type: string; Properties: Record<string, unknown> };

const props = JSON.parse(process.argv[2] ?? "{}") as ConstructorParameters<typeof DecisionStack>[2];
const app = new App({ context: { "aws:cdk:bundling-stacks": [] } });
const stack = new DecisionStack(app, "Test", {
  imageUri: "123456789012.dkr.ecr.us-east-1.amazonaws.com/decide:1",
  ...props,
});
const resources = Template.fromStack(stack).toJSON().Resources as Record<string, Resource>;
const mappings = Object.values(resources)
  .filter((r) => r.Type === "AWS::Lambda::EventSourceMapping")
  .map((r) => r.Properties);
process.stdout.write(`${JSON.stringify(mappings)}\n`);
