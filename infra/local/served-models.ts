/**
 * The models a decision endpoint already running serves (`decide local --endpoint-url`), read
 * from its `GET /v1/models`, so that the local decide functions know which of a cascade's later
 * tiers they may ask (`TIER_ENDPOINTS`, each name mapped to that endpoint, as the deployed stack
 * sets it). An endpoint this process starts serves every demo model a cascade names, so it needs
 * no such list.
 */

/** A model as `/v1/models` lists it under `models`. */
interface ListedModel {
  readonly name?: unknown;
  readonly aliases?: unknown;
  readonly any_name_accepted?: unknown;
}

/**
 * The names the endpoint at `url` answers to; undefined when it accepts any name or does not say
 * (then every tier is asked, as before).
 */
export async function servedModelNames(url: string): Promise<string[] | undefined> {
  let body: { models?: unknown };
  try {
    const response = await fetch(`${url}/v1/models`, { signal: AbortSignal.timeout(10_000) });
    if (!response.ok) return undefined;
    body = (await response.json()) as { models?: unknown };
  } catch {
    return undefined;
  }
  if (!Array.isArray(body.models)) return undefined;
  const models = body.models as ListedModel[];
  if (models.some((model) => model.any_name_accepted === true)) return undefined;
  const names = models.flatMap((model) => [
    ...(typeof model.name === "string" ? [model.name] : []),
    ...(Array.isArray(model.aliases) ? model.aliases.filter((a): a is string => typeof a === "string") : []),
  ]);
  return names;
}
