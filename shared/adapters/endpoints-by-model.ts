/**
 * The decision endpoints of a cascade, by model: a policy's later tiers may run on endpoints of
 * their own (a larger model on a larger instance type), named by `TIER_ENDPOINTS` as
 * `{"<model>": "<endpoint name>"}`. A request for a model the map does not name goes to the
 * first endpoint, which serves it by name when it serves several (the local mode does).
 */
import type { DecidesItems, EndpointDecision } from "../domain/decision-endpoint.ts";
import type { Item } from "../domain/item.ts";
import type { Policy } from "../domain/policy/policy.ts";

/** Sends each request to the endpoint of the model its policy (or tier) names. */
export class EndpointsByModel implements DecidesItems {
  constructor(
    private readonly first: DecidesItems,
    private readonly byModel: ReadonlyMap<string, DecidesItems>,
  ) {}

  decide(item: Item, policy: Policy): Promise<EndpointDecision> {
    const endpoint = (policy.model ? this.byModel.get(policy.model) : undefined) ?? this.first;
    return endpoint.decide(item, policy);
  }
}

/** Reads `TIER_ENDPOINTS` (a JSON object of model name to endpoint name); throws naming what is wrong. */
export function parseTierEndpoints(raw: string | undefined): Map<string, string> {
  if (raw === undefined || raw.trim() === "") return new Map();
  let parsed: unknown;
  try {
    parsed = JSON.parse(raw);
  } catch (error) {
    throw new Error(`TIER_ENDPOINTS is not JSON: ${(error as Error).message}`);
  }
  if (typeof parsed !== "object" || parsed === null || Array.isArray(parsed))
    throw new Error('TIER_ENDPOINTS must be an object, {"<model>": "<endpoint name>"}');
  const entries = Object.entries(parsed);
  const bad = entries.find(([, name]) => typeof name !== "string" || name === "");
  if (bad) throw new Error(`TIER_ENDPOINTS: model "${bad[0]}" needs an endpoint name`);
  return new Map(entries as [string, string][]);
}
