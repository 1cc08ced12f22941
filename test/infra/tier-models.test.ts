/**
 * A cascade's later models on the deployed stack (`-c tierModels=demo-large=demo-large.gguf`):
 * the real-time and async endpoints' containers load them by name from the same archive
 * (DECIDE_EXTRA_MODELS), the decide function is told to ask them of that endpoint
 * (TIER_ENDPOINTS, each mapped to the endpoint's own name) within its
 * timeout, and cdk-nag stays clean; without the flag nothing is served beyond the first model
 * and no tier is asked. The context value is checked with a message naming what is wrong.
 */
import { Annotations, Match, Template } from "aws-cdk-lib/assertions";
import { describe, expect, it } from "vitest";
import { endpointCallsWith, tierModelsFromContext } from "../../infra/constructs/endpoint/tier-models.ts";
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
  it("serves the later model from both endpoints' archive and tells the decide function to ask it", () => {
    // Both containers load the one archive alike, so each finds its first model among the files
    // (without the setting the async one found two models and never became healthy).
    const environments = Object.values(modelEnvironments(template));
    expect(environments).toHaveLength(2);
    for (const env of environments)
      expect(env.DECIDE_EXTRA_MODELS).toBe("demo-large=/opt/ml/model/demo-large.gguf");
    // Two calls per item now fit the function's timeout as one item's two tries did: one try each.
    template.hasResourceProperties("AWS::Lambda::Function", {
      Environment: {
        Variables: Match.objectLike({
          DECISION_ENDPOINT_NAME: Match.anyValue(),
          TIER_ENDPOINTS: Match.anyValue(),
          ENDPOINT_TIMEOUT_MS: "50000",
          ENDPOINT_ATTEMPTS: "1",
        }),
      },
    });
    // The one variable: the later model, answered by the decision endpoint itself.
    const functions = Object.values(
      template.findResources("AWS::Lambda::Function") as Record<string, Resource>,
    );
    const told = functions
      .map(
        (fn) => (fn.Properties.Environment as { Variables: Record<string, unknown> } | undefined)?.Variables,
      )
      .filter((variables) => variables?.ENDPOINT_TIMEOUT_MS === "50000");
    expect(told.length).toBeGreaterThan(0);
    for (const variables of told) {
      expect(JSON.parse(variables!.TIER_ENDPOINTS as string)).toEqual({
        "demo-large": variables!.DECISION_ENDPOINT_NAME,
      });
      expect(variables!.TIER_MODELS).toBeUndefined();
    }
    const errors = Annotations.fromStack(stack).findError(
      "*",
      Match.stringLikeRegexp("AwsSolutions-|Serverless"),
    );
    expect(errors).toEqual([]);
  });

  it("has the async lane's result function ask the later model of the real-time endpoint, one try each", () => {
    const functions = template.findResources("AWS::Lambda::Function") as Record<string, Resource>;
    const results = Object.entries(functions).filter(([id]) => id.startsWith("PipelineAsyncResults"));
    expect(results).toHaveLength(1);
    const [id, fn] = results[0]!;
    const variables = (fn.Properties.Environment as { Variables: Record<string, unknown> }).Variables;
    expect(JSON.parse(variables.TIER_ENDPOINTS as string)).toEqual({
      "demo-large": variables.DECISION_ENDPOINT_NAME,
    });
    expect(variables.TIER_MODELS).toBeUndefined();
    expect(variables.ENDPOINT_ATTEMPTS).toBe("1");
    expect(variables.DECISION_ENDPOINT_NAME).toBeDefined();
    // Its role may call that endpoint (InvokeEndpoint), beside re-invoking the async one.
    const role = JSON.stringify((fn.Properties.Role as { "Fn::GetAtt": string[] })["Fn::GetAtt"][0]);
    const policies = template.findResources("AWS::IAM::Policy") as Record<string, Resource>;
    const granted = Object.values(policies)
      .filter((p) => JSON.stringify(p.Properties.Roles).includes(JSON.parse(role)))
      .flatMap(
        (p) => (p.Properties.PolicyDocument as { Statement: { Action: string | string[] }[] }).Statement,
      )
      .flatMap((s) => [s.Action].flat());
    expect(granted, id).toContain("sagemaker:InvokeEndpoint");
    // Without -c tierModels the lane asks no later tier.
    const plain = Template.fromStack(synthStack()).findResources("AWS::Lambda::Function") as Record<
      string,
      Resource
    >;
    const plainResults = Object.entries(plain).find(([key]) => key.startsWith("PipelineAsyncResults"))!;
    const plainVariables = (plainResults[1].Properties.Environment as { Variables: Record<string, unknown> })
      .Variables;
    expect(plainVariables.DECISION_ENDPOINT_NAME).toBeUndefined();
  });

  it("serves nothing beyond the first model without it", () => {
    const plain = Template.fromStack(synthStack());
    expect(Object.values(modelEnvironments(plain)).some((env) => env.DECIDE_EXTRA_MODELS)).toBe(false);
  });

  it("shares one item's endpoint budget among the models it may call, one try each", () => {
    const calls = { endpointTimeoutMs: 50_000, endpointAttempts: 2 };
    expect(endpointCallsWith([], calls)).toEqual({ timeoutMs: 50_000, attempts: 2 });
    const two = tierModelsFromContext("b=b.gguf,c=c.gguf");
    expect(endpointCallsWith(two, calls)).toEqual({ timeoutMs: 33_333, attempts: 1 });
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
