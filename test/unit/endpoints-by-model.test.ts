/**
 * Which endpoint answers for a cascade's later-tier model: TIER_ENDPOINTS maps each model served
 * to its endpoint (the decision endpoint's own models to its own name), the decide function builds
 * one client per endpoint, and a request goes to the endpoint of the model its tier names
 * (anything else to the first). A model the map does not name is not asked; unset, the first
 * serves every name. A malformed map fails at start, by name.
 */
import { describe, expect, it } from "vitest";
import { endpointFromEnv } from "../../functions/decide.ts";
import { BatchingDecisionEndpoint } from "../../shared/adapters/batching-endpoint.ts";
import {
  EndpointsByModel,
  parseTierEndpoints,
  tierEndpointsVariable,
} from "../../shared/adapters/endpoints-by-model.ts";
import type { DecidesItems, EndpointDecision } from "../../shared/domain/decision-endpoint.ts";
import { TEAMS_POLICY } from "../helpers/policies.ts";

const answering = (name: string, asked: string[]): DecidesItems => ({
  decide: async (): Promise<EndpointDecision> => {
    asked.push(name);
    return {
      logits: [1, 0],
      allowedTokenMass: 1,
      modelSha256: "a".repeat(64),
      promptSha256: "b".repeat(64),
      promptVersion: "t@1",
      latencyMs: 1,
    };
  },
});

describe("endpoints by model", () => {
  it("sends each tier to its model's endpoint, and unnamed or unmapped models to the first", async () => {
    const asked: string[] = [];
    const router = new EndpointsByModel(
      answering("first", asked),
      new Map([["large", answering("tier2", asked)]]),
    );
    const item = { id: "x", policy: "tickets", state: "s" };
    await router.decide(item, { ...TEAMS_POLICY, model: "large" });
    await router.decide(item, TEAMS_POLICY);
    await router.decide(item, { ...TEAMS_POLICY, model: "small" });
    expect(asked).toEqual(["tier2", "first", "first"]);
  });

  it("reads TIER_ENDPOINTS and refuses what is not a map of names", () => {
    expect(parseTierEndpoints(undefined)).toBeUndefined();
    expect(parseTierEndpoints(" ")).toBeUndefined();
    expect(parseTierEndpoints("{}")?.size).toBe(0);
    expect([...parseTierEndpoints('{"large":"stack-tier2"}')!]).toEqual([["large", "stack-tier2"]]);
    expect(() => parseTierEndpoints("[1]")).toThrow(/must be an object/);
    expect(() => parseTierEndpoints('{"large":""}')).toThrow(/model "large" needs an endpoint name/);
    expect(() => parseTierEndpoints("{")).toThrow(/not JSON/);
  });

  it("writes the models one endpoint serves as TIER_ENDPOINTS, each mapped to that endpoint", () => {
    expect(tierEndpointsVariable([], "stack-first")).toBe("{}");
    const written = tierEndpointsVariable(["demo-large", "huge"], "stack-first");
    expect(Object.fromEntries(parseTierEndpoints(written)!)).toEqual({
      "demo-large": "stack-first",
      huge: "stack-first",
    });
  });

  it("says which later-tier models it serves: those the map names, whichever endpoint answers", () => {
    const first = answering("first", []);
    const tiers = new Map([
      ["large", answering("tier2", [])],
      ["medium", first],
    ]);
    const router = new EndpointsByModel(first, tiers);
    expect([router.serves("large"), router.serves("medium"), router.serves("huge")]).toEqual([
      true,
      true,
      false,
    ]);
    expect(new EndpointsByModel(first, new Map()).serves("huge")).toBe(false);
  });

  it("is read by the decide function from the one variable TIER_ENDPOINTS", () => {
    const env = { DECISION_ENDPOINT_NAME: "stack-first", AWS_REGION: "us-east-1" };
    // The deployed stack without later models: its one-model endpoint serves no later tier.
    expect(endpointFromEnv({ ...env, TIER_ENDPOINTS: "{}" }).serves?.("demo-large")).toBe(false);
    // With -c tierModels: the endpoint's own later models map to its own name.
    const own = endpointFromEnv({ ...env, TIER_ENDPOINTS: '{"demo-large":"stack-first"}' });
    expect([own.serves?.("demo-large"), own.serves?.("huge")]).toEqual([true, false]);
    // The variable that once listed the first endpoint's later models is read no more.
    const former = endpointFromEnv({ ...env, TIER_ENDPOINTS: "{}", TIER_MODELS: "demo-large" });
    expect(former.serves?.("demo-large")).toBe(false);
  });

  it("builds one client per endpoint in the decide function, the first alone without a map", () => {
    const env = { DECISION_ENDPOINT_NAME: "stack-first", AWS_REGION: "us-east-1" };
    expect(endpointFromEnv(env)).toBeInstanceOf(BatchingDecisionEndpoint);
    expect(endpointFromEnv({ ...env, TIER_ENDPOINTS: '{"large":"stack-tier2"}' })).toBeInstanceOf(
      EndpointsByModel,
    );
  });
});
