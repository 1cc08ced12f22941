/**
 * A cascade's later models on the deployed stack (`-c tierModels=demo-large=demo-large.gguf`):
 * the real-time endpoint's container serves them by name from the same archive
 * (DECIDE_EXTRA_MODELS), the decide function is told to ask them (TIER_MODELS), and cdk-nag
 * stays clean; without the flag nothing is served beyond the first model and no tier is asked.
 * The context value is checked with a message naming what is wrong.
 */
import { Annotations, Match, Template } from "aws-cdk-lib/assertions";
import { describe, expect, it } from "vitest";
import { tierModelsFromContext } from "../../infra/constructs/tier-models.ts";
import { type Resource, synthStack } from "../helpers/synth-stack.ts";

const stack = synthStack({ tierModels: tierModelsFromContext("demo-large=demo-large.gguf") });
const template = Template.fromStack(stack);

/** The environment of each SageMaker model, by logical id. */
function modelEnvironments(t: Template): Record<string, Record<string, string>> {
  const models = t.findResources("AWS::SageMaker::Model") as Record<string, Resource>;
  return Object.fromEntries(
    Object.entries(models).map(([id, m]) => [
      id,
      (m.Properties.PrimaryContainer as { Environment: Record<string, string> }).Environment,
    ]),
  );
}

describe("-c tierModels", () => {
  it("serves the later model from the real-time endpoint's archive and tells the decide function to ask it", () => {
    const environments = modelEnvironments(template);
    const serving = Object.entries(environments).filter(([, env]) => env.DECIDE_EXTRA_MODELS);
    expect(serving.map(([, env]) => env.DECIDE_EXTRA_MODELS)).toEqual([
      "demo-large=/opt/ml/model/demo-large.gguf",
    ]);
    // The async lane answers the first model only (its later tiers go to people): no second model loaded there.
    expect(serving[0]![0]).not.toMatch(/Async/);
    template.hasResourceProperties("AWS::Lambda::Function", {
      Environment: {
        Variables: Match.objectLike({ DECISION_ENDPOINT_NAME: Match.anyValue(), TIER_MODELS: "demo-large" }),
      },
    });
    const errors = Annotations.fromStack(stack).findError(
      "*",
      Match.stringLikeRegexp("AwsSolutions-|Serverless"),
    );
    expect(errors).toEqual([]);
  });

  it("serves nothing beyond the first model without it", () => {
    const plain = Template.fromStack(synthStack());
    expect(Object.values(modelEnvironments(plain)).some((env) => env.DECIDE_EXTRA_MODELS)).toBe(false);
  });

  it("reads NAME=FILE pairs and names what is wrong with a bad one", () => {
    expect(tierModelsFromContext("demo-large=demo-large.gguf, huge=m/huge.gguf")).toEqual([
      { name: "demo-large", file: "demo-large.gguf" },
      { name: "huge", file: "m/huge.gguf" },
    ]);
    expect(() => tierModelsFromContext("demo-large")).toThrow(/"demo-large" is not NAME=FILE/);
    expect(() => tierModelsFromContext("x=../secret.gguf")).toThrow(
      /not a \.gguf file inside the model archive/,
    );
    expect(() => tierModelsFromContext("x=/abs.gguf")).toThrow(/not a \.gguf file inside/);
    expect(() => tierModelsFromContext("x=model.bin")).toThrow(/not a \.gguf file inside/);
    expect(() => tierModelsFromContext("bad name=m.gguf")).toThrow(/"bad name" is not a model name/);
    expect(() => tierModelsFromContext("a=a.gguf,a=b.gguf")).toThrow(/"a" is named twice/);
  });
});
