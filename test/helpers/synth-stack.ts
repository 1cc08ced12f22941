/**
 * The CDK app's stack, synthesized offline for the infrastructure tests: bundling skipped (esbuild
 * runs in `npm run synth`), everything else the real app, with cdk-nag's AwsSolutions and
 * Serverless packs applied so that their findings are on the stack's annotations.
 */
import { App, Aspects } from "aws-cdk-lib";
import { AwsSolutionsChecks, ServerlessChecks } from "cdk-nag";
import { DecisionStack } from "../../infra/decision-stack.ts";

/** A resource of the template, as the tests read it. */
export type Resource = { Properties: Record<string, unknown> };

/** Synthesizes the stack with `props` (a fixed image URI unless given). */
export function synthStack(props: ConstructorParameters<typeof DecisionStack>[2] = {}): DecisionStack {
  const app = new App({ context: { "aws:cdk:bundling-stacks": [] } });
  const created = new DecisionStack(app, "Test", {
    imageUri: "123456789012.dkr.ecr.us-east-1.amazonaws.com/decide:1",
    ...props,
  });
  Aspects.of(app).add(new AwsSolutionsChecks({ reports: false }));
  Aspects.of(app).add(new ServerlessChecks({ reports: false }));
  app.synth();
  return created;
}
