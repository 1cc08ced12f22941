/**
 * Routing: whether a decision is applied automatically or goes to a person, and why.
 * Pure: the same distribution, policy and item always route the same way.
 */
import { createHash } from "node:crypto";
import { type AuditInclusion, auditInclusion } from "./audit/bands.ts";
import { certificateProblem, type ScoredBy } from "./calibration/provenance.ts";
import { counted } from "./plural.ts";
import type { Policy } from "./policy/policy.ts";
import { argmax } from "./probability.ts";

/** Where a decision goes. */
export const ROUTES = ["auto", "human"] as const;
export type Route = (typeof ROUTES)[number];

/** Why it goes there. */
export const ROUTE_REASONS = [
  "confident",
  "out_of_scope",
  "below_threshold",
  "option_needs_review",
  "audit_sample",
  "off_options",
  "uncertified",
] as const;
export type RouteReason = (typeof ROUTE_REASONS)[number];

/** The routing outcome. */
export interface Routing {
  readonly route: Route;
  readonly reason: RouteReason;
  /** The most probable option. */
  readonly chosen: string;
  /** Its calibrated probability. */
  readonly topProbability: number;
  /**
   * For a decision that passed every other rule (automated, or drawn for audit): its audit band
   * and the chance it was drawn. Absent for decisions people get for any other reason.
   */
  readonly audit?: AuditInclusion;
  /**
   * Why the policy's certificate does not hold for this decision ("certificate stale: model
   * changed"), when the policy carries one or requires one.
   */
  readonly certificateProblem?: string;
}

/**
 * Deterministic audit draw in [0, 1) from the item, policy and version: the same item is always
 * in or out of the audit sample (as Amazon A2I samples), so redelivery cannot change the route.
 */
export function auditDraw(itemId: string, policy: Pick<Policy, "id" | "version">): number {
  const digest = createHash("sha256").update(`${policy.id}@${policy.version}\n${itemId}`).digest();
  return digest.readUInt32BE(0) / 2 ** 32;
}

/**
 * Routes a calibrated distribution (in the policy's option order). People get it when the top
 * option is out of scope, the option letters held less of the model's probability than the
 * policy's `minAllowedTokenMass` (the item fits none of the options), the top option is below
 * the threshold or not automatable, the policy's certificate does not hold where the policy
 * requires one or certified no threshold (`uncertified`: it would otherwise have been automated),
 * or the item is drawn for audit (at its confidence band's rate, see `audit/bands.ts`).
 * `allowedTokenMass` is null or absent when it was not read; the guard then does not apply.
 * `scoredBy` (model and prompt layout) is checked against the certificate; the problem found is
 * returned either way, so that the record flags it. `unverified` is why the certificate's labels
 * did not give it back, where the caller checked them (the decide path does for a policy that
 * requires a certificate): such a certificate does not hold either. `certified` is the policy
 * whose certificate speaks for this answer: `policy` itself, or for a later tier of a cascade
 * (`policy` is then that tier's view) the whole policy, checked for the tier `scoredBy` names.
 */
export function routeDecision(
  policy: Policy,
  probabilities: readonly number[],
  itemId: string,
  allowedTokenMass?: number | null,
  scoredBy?: ScoredBy,
  unverified?: string,
  certified: Policy = policy,
): Routing {
  if (probabilities.length !== policy.options.length) {
    throw new RangeError(
      `expected ${policy.options.length} probabilities for ${policy.id}, got ${probabilities.length}`,
    );
  }
  const top = argmax(probabilities);
  const option = policy.options[top]!;
  const topProbability = probabilities[top]!;
  const problem =
    certified.certificate || certified.requireCertificate
      ? (certificateProblem(certified, scoredBy) ?? unverified)
      : undefined;
  const flagged = problem ? { certificateProblem: problem } : {};
  const human = (reason: RouteReason): Routing => ({
    route: "human",
    reason,
    chosen: option.id,
    topProbability,
    ...flagged,
  });
  if (option.id === policy.outOfScopeOption) return human("out_of_scope");
  if (
    policy.minAllowedTokenMass !== undefined &&
    typeof allowedTokenMass === "number" &&
    allowedTokenMass < policy.minAllowedTokenMass
  )
    return human("off_options");
  if (topProbability < policy.autoThreshold) return human("below_threshold");
  if (!option.automate) return human("option_needs_review");
  if (problem && (certified.requireCertificate || certified.certificate?.threshold === null))
    return human("uncertified");
  const audit = auditInclusion(policy, topProbability);
  if (auditDraw(itemId, policy) < audit.inclusionProbability) return { ...human("audit_sample"), audit };
  return { route: "auto", reason: "confident", chosen: option.id, topProbability, audit, ...flagged };
}

/**
 * How a routed decision counts wherever automation is counted (the what-if, `decide status`, the
 * decisions page): `automated` (acted on alone), `audit_sample` (it passed every rule, so the
 * policy would have acted on it, but it was drawn for a person's label first) or `escalated`
 * (people decide it for any other reason).
 */
export const HANDLINGS = ["automated", "audit_sample", "escalated"] as const;
export type Handling = (typeof HANDLINGS)[number];

/** The handling of a decision by its route and reason (a record's, or a what-if's). */
export function handlingOf(decision: { readonly route?: string; readonly reason?: string }): Handling {
  if (decision.route === "auto") return "automated";
  return decision.reason === "audit_sample" ? "audit_sample" : "escalated";
}

/**
 * Whether the policy would act on the decision: automated, or an audit sample (it would have
 * been automated but for the draw). The one meaning of "automated" in every count and share:
 * a labelled item counts when its top option may be automated and clears the threshold
 * ({@link wouldAutomate}), a routed one when this holds; audit samples are shown beside it.
 */
export const actedOn = (decision: { readonly route?: string; readonly reason?: string }): boolean =>
  handlingOf(decision) !== "escalated";

/** Whether `policy` ever acts alone on option `optionId` (automatable, and not out of scope). */
export function optionAutomated(
  policy: Pick<Policy, "options" | "outOfScopeOption">,
  optionId: string,
): boolean {
  const option = policy.options.find((o) => o.id === optionId);
  return option?.automate === true && option.id !== policy.outOfScopeOption;
}

/**
 * Whether the policy would act on a calibrated distribution at `threshold` (by default its own):
 * the top option may be automated and is at least that probable. The counting rule of the
 * threshold table and the certificate, the labelled-item form of {@link actedOn}.
 */
export function wouldAutomate(
  policy: Pick<Policy, "options" | "outOfScopeOption" | "autoThreshold">,
  probabilities: readonly number[],
  threshold = policy.autoThreshold,
): boolean {
  const top = argmax(probabilities);
  return probabilities[top]! >= threshold && optionAutomated(policy, policy.options[top]!.id);
}

/** Decisions by handling; `actedOn` is what the policy acts on (automated and audit samples). */
export interface HandlingCounts extends Record<Handling, number> {
  actedOn: number;
}

/**
 * Counts routed decisions by handling, into `counts` when given (a page at a time). Decisions
 * without a route (rejected) are not counted.
 */
export function countHandling(
  decisions: Iterable<{ readonly route?: string; readonly reason?: string }>,
  counts: HandlingCounts = { automated: 0, audit_sample: 0, escalated: 0, actedOn: 0 },
): HandlingCounts {
  for (const d of decisions) {
    if (d.route === undefined) continue;
    const handling = handlingOf(d);
    counts[handling]++;
    if (handling !== "escalated") counts.actedOn++;
  }
  return counts;
}

/** "12 acted on (10 automated, 2 audit samples, which people label first), 38 escalated". */
export function handlingText(c: HandlingCounts): string {
  const samples = counted(c.audit_sample, "audit sample");
  return `${c.actedOn.toLocaleString("en-US")} acted on (${c.automated.toLocaleString("en-US")} automated, ${samples}, which people label first), ${c.escalated.toLocaleString("en-US")} escalated`;
}
