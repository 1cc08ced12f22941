/**
 * The decision endpoints of a cascade, by model: `TIER_ENDPOINTS`, a JSON object of model name to
 * endpoint name, says which endpoint answers for each later-tier model the deployment serves.
 * The decision endpoint's own models (`-c tierModels`: one container serving several files by
 * name) map to its own name, `DECISION_ENDPOINT_NAME`; a later tier on an endpoint of its own (a
 * larger model on a larger instance type) maps to that endpoint's. A later-tier model the map
 * does not name is served by no endpoint here and is skipped rather than refused item by item
 * (a deployed SageMaker endpoint serves only the models it was given: `{}` asks no later tier).
 * Unset, the first endpoint serves every name (the local mode's own endpoint does). The stack
 * and the local mode write the variable with {@link tierEndpointsVariable}, the functions read it
 * with {@link parseTierEndpoints}.
 */
import type { DecidesItems, EndpointDecision } from "../domain/decision-endpoint.ts";
import type { Item } from "../domain/item.ts";
import type { Policy } from "../domain/policy/policy.ts";

/** Sends each request to the endpoint of the model its policy (or tier) names. */
export class EndpointsByModel implements DecidesItems {
  /**
   * @param first the decision endpoint: the first tier's, and any model the map does not name
   * @param byModel each later-tier model served, with the client of its endpoint
   */
  constructor(
    private readonly first: DecidesItems,
    private readonly byModel: ReadonlyMap<string, DecidesItems>,
  ) {}

  serves(model: string): boolean {
    return this.byModel.has(model);
  }

  decide(item: Item, policy: Policy): Promise<EndpointDecision> {
    const endpoint = (policy.model ? this.byModel.get(policy.model) : undefined) ?? this.first;
    return endpoint.decide(item, policy);
  }
}

/**
 * Reads `TIER_ENDPOINTS` (a JSON object of model name to endpoint name); undefined when unset or
 * blank (the first endpoint then serves every name). Throws naming what is wrong.
 */
export function parseTierEndpoints(raw: string | undefined): Map<string, string> | undefined {
  if (raw === undefined || raw.trim() === "") return undefined;
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

/**
 * `TIER_ENDPOINTS` for later-tier `models` that one endpoint serves by name beside its first
 * model: each mapped to `endpointName` (`{}` for none: no later tier is asked). An endpoint name
 * (letters, digits, hyphens; a CDK token resolves to one) needs no escaping in the JSON.
 */
export function tierEndpointsVariable(models: readonly string[], endpointName: string): string {
  return JSON.stringify(Object.fromEntries(models.map((model) => [model, endpointName])));
}
