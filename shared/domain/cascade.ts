/**
 * A cascade: a policy's models asked in order before people. The first tier is the policy as it
 * reads (its `model`, calibration and threshold); each later tier is the policy with that tier's
 * model, calibration map and threshold. An item goes on to the next tier only when the tier before
 * is not confident enough to act: its top option is below its threshold, is an option that is
 * never automated, is the out-of-scope option, or the option letters held too little of the
 * model's probability. What a tier is sure of ends there: it acts (`auto`), or people get it for
 * a reason no other model can change (an audit draw, a certificate that does not hold).
 */
import { withMapFields } from "./calibration/map-schema.ts";
import type { Policy } from "./policy/policy.ts";
import type { RouteReason } from "./routing.ts";

/** The routing reasons that send an item on to the next tier (where there is one). */
export const PASS_ON_REASONS = [
  "below_threshold",
  "option_needs_review",
  "out_of_scope",
  "off_options",
] as const satisfies readonly RouteReason[];

/** Whether a tier that routed for `reason` hands the item to the next tier. */
export function passesOn(reason: RouteReason): boolean {
  return (PASS_ON_REASONS as readonly RouteReason[]).includes(reason);
}

/** How many models the policy asks before people: 1 without a cascade. */
export function tierCount(policy: Pick<Policy, "cascade">): number {
  return 1 + (policy.cascade?.length ?? 0);
}

/**
 * The policy as tier `index` (0 for the first) reads and routes an answer: that tier's model,
 * calibration map, threshold and off-options guard, everything else the policy's own. A later
 * tier's view has no cascade of its own (nothing asks a tier for the tiers after it) and no
 * certificate: its answer is checked against the whole policy's (`routeDecision`'s `certified`),
 * which covers it only when it is a cascade's certificate naming this tier; where the policy
 * requires a certificate, a later tier automates nothing until one does.
 */
export function tierPolicy(policy: Policy, index: number): Policy {
  if (index === 0) return policy;
  const tier = policy.cascade?.[index - 1];
  if (!tier) throw new RangeError(`${policy.id}@${policy.version} has no tier ${index + 1}`);
  const { cascade: _cascade, certificate: _certificate, ...rest } = policy;
  // Every field of the calibration map is the tier's, or absent where the tier has none.
  return withMapFields({ ...rest, model: tier.model }, tier);
}

/** Every tier of the policy, first to last, as {@link tierPolicy} gives them. */
export function tiersOf(policy: Policy): Policy[] {
  return Array.from({ length: tierCount(policy) }, (_, i) => tierPolicy(policy, i));
}

/** One tier's answer on an item, kept on its decision record in the order the tiers were asked. */
export interface TierAnswer {
  /** The model's name as the policy names it; absent for the endpoint's own (a first tier without `model`). */
  readonly model?: string;
  readonly modelSha256: string;
  readonly promptSha256: string;
  readonly promptVersion?: string;
  /** Its calibrated probabilities by option id (under the tier's own calibration). */
  readonly distribution: Record<string, number>;
  readonly rawLogits: number[];
  readonly chosen: string;
  readonly topProbability: number;
  /** How this tier routed it: a pass-on reason for every tier but the last asked. */
  readonly reason: RouteReason;
  readonly allowedTokenMass?: number | null;
  readonly temperature: number;
  readonly latencyMs: number;
}

/**
 * A later tier's answer obtained after the decision (a re-score through the endpoint, never acted
 * on): which tier (1: the second), and when it was asked.
 */
export interface RescoredAnswer extends TierAnswer {
  readonly rescore: true;
  readonly tier: number;
  readonly rescoredAt: string;
}

/** Which tier a cascade's record holds the answer of ("Decision Made" says it): the last one asked. */
export function actingTier(tiers: readonly TierAnswer[]): { index: number; model?: string } {
  const model = tiers.at(-1)?.model;
  return { index: tiers.length, ...(model ? { model } : {}) };
}

/** What a record holds of one tier's answer: what calibration and provenance read. */
export interface TierReading {
  readonly rawLogits?: number[] | undefined;
  readonly modelSha256?: string | undefined;
  readonly promptVersion?: string | undefined;
  readonly allowedTokenMass?: number | null | undefined;
  readonly chosen?: string | undefined;
}

/**
 * Tier `index`'s answer on a record (0: the first tier): from `tiers` when the record has them,
 * else the record's own fields for the first tier; undefined when that tier was not asked.
 */
export function tierReading(
  record: TierReading & { readonly tiers?: readonly TierAnswer[] | undefined },
  index: number,
): TierReading | undefined {
  if (record.tiers) return record.tiers[index];
  return index === 0 ? record : undefined;
}

/**
 * Tier `index`'s re-scored answer on a record (`rescores`), made at or before `until` when given
 * (a certificate read back sees the answers it was made on); undefined when there is none.
 */
export function rescoredReading(
  record: { readonly rescores?: readonly RescoredAnswer[] | undefined },
  index: number,
  until?: string,
): RescoredAnswer | undefined {
  return record.rescores?.find((r) => r.tier === index && (until === undefined || r.rescoredAt <= until));
}
