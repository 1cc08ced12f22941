/**
 * A cascade's later tiers on endpoints of their own: TIER_ENDPOINTS maps a model to its endpoint,
 * the decide function builds one client per endpoint, and a request goes to the endpoint of the
 * model its tier names (anything else to the first). A malformed map fails at start, by name.
 */
import { describe, expect, it } from "vitest";
import { endpointFromEnv } from "../../functions/decide.ts";
import { BatchingDecisionEndpoint } from "../../shared/adapters/batching-endpoint.ts";
import { EndpointsByModel, parseTierEndpoints } from "../../shared/adapters/endpoints-by-model.ts";
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
    expect(parseTierEndpoints(undefined).size).toBe(0);
    expect([...parseTierEndpoints('{"large":"stack-tier2"}')]).toEqual([["large", "stack-tier2"]]);
    expect(() => parseTierEndpoints("[1]")).toThrow(/must be an object/);
    expect(() => parseTierEndpoints('{"large":""}')).toThrow(/model "large" needs an endpoint name/);
    expect(() => parseTierEndpoints("{")).toThrow(/not JSON/);
  });

  it("builds one client per endpoint in the decide function, the first alone without a map", () => {
    const env = { DECISION_ENDPOINT_NAME: "stack-first", AWS_REGION: "us-east-1" };
    expect(endpointFromEnv(env)).toBeInstanceOf(BatchingDecisionEndpoint);
    expect(endpointFromEnv({ ...env, TIER_ENDPOINTS: '{"large":"stack-tier2"}' })).toBeInstanceOf(
      EndpointsByModel,
    );
  });
});
