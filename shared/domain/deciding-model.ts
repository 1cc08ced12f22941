/**
 * Which model decided an item, said the same way wherever a decision is shown (the item page, the
 * decisions page, a batch's results file): the name the endpoint serves it under when the policy
 * or its cascade tier names one, else the endpoint's own model; with the model file's SHA-256,
 * which the record always keeps.
 */
import type { DecisionRecord } from "./decision-record.ts";
import type { Policy } from "./policy/policy.ts";

/** The name a results file gives the endpoint's own model (a request that names no model). */
export const DEFAULT_MODEL = "default";

/** The deciding model's name, or {@link DEFAULT_MODEL} for the endpoint's own. */
export function decidingModel(
  record: Pick<DecisionRecord, "tiers">,
  policy: Pick<Policy, "model"> | undefined,
): string {
  const tiers = record.tiers;
  // A cascade's record holds the acting tier's answer last; its first tier may name no model.
  const named = tiers && tiers.length > 0 ? tiers.at(-1)?.model : policy?.model;
  return named ?? DEFAULT_MODEL;
}

/** The deciding model for people: its name, or "the endpoint's own model". */
export function modelInWords(name: string | undefined): string {
  return name === undefined || name === DEFAULT_MODEL ? "the endpoint's own model" : name;
}
