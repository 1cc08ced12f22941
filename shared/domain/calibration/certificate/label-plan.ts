/**
 * The label plan (`decide calibrate --plan`): before anyone labels, how many labels of decisions
 * the policy would automate a certificate needs, and how many of those already held count. A
 * certificate at a target rate with a confidence needs, even with no error at all, enough evenly
 * drawn labels of automated decisions that the exact bound falls under the target (149 for 2% at
 * 95%); at the error rate seen so far it needs more. Labels held count for what they are worth:
 * escalations are not decisions the policy would automate (below any threshold worth certifying),
 * and audit samples drawn at a few percent each stand for many decisions, so a handful of them is
 * worth fewer evenly drawn labels (the inverse of the largest weight's share, the count whose
 * exact bound equals theirs with no error). For a cascade, each labelled decision is judged by
 * the model that decides it as the policy runs (the confidence a certification draw reads), not by
 * the first model alone.
 */
import { tierPolicy } from "../../cascade.ts";
import type { Policy } from "../../policy/policy.ts";
import { mapOf } from "../map.ts";
import { trialsNeeded } from "./binomial.ts";
import { type CertificateGoal, zeroErrorLabels } from "./certificate.ts";
import { type CertifiedItem, type KindCounts, type UnitsAt, unitsAtGrid } from "./certificate-units.ts";
import { type CascadeRow, cascadeItems, certifiedItems } from "./certified-items.ts";
import { planThresholds } from "./registered-plan.ts";

/** What the plan says. */
export interface LabelPlan extends CertificateGoal {
  /** Evenly drawn labels of automated decisions needed if none is wrong. */
  readonly zeroErrors: number;
  /** The threshold the plan aims at: the one the labels so far make cheapest to certify. */
  readonly threshold: number;
  /** What the labels show there, and the evenly drawn labels that rate would need (null: none would do). */
  readonly observed?: { readonly units: number; readonly errors: number; readonly rate: number };
  readonly needed: number | null;
  /** All labels held; those of decisions it would automate, by kind; what they are worth. */
  readonly held: {
    readonly labels: number;
    readonly automatable: number;
    readonly kinds: KindCounts;
    readonly worth: number;
  };
  /** Evenly drawn labels still to get (null: none would do). */
  readonly remaining: number | null;
  /**
   * With the version's decisions given: how many are at or above the threshold (what a
   * certification sample can draw from), and whether the labels needed exceed them (out of reach
   * at this volume: no sample of this frame can give the certificate).
   */
  readonly frame?: { readonly decisions: number; readonly outOfReach: boolean };
  /** The threshold is the one a certification sample was drawn for, kept whatever the labels show since. */
  readonly fixed?: boolean;
}

/** The observed rate at one threshold: the weighted share of wrong units. */
function rateOf(u: UnitsAt): number {
  return u.evidence.method === "fay-feuer" ? (u.evidence.weightedErrors ?? 0) : u.errors / u.automated;
}

/** What the units at a threshold are worth in evenly drawn labels. */
function worthOf(u: UnitsAt): number {
  if (u.automated === 0) return 0;
  if (u.evidence.method === "clopper-pearson") return u.automated;
  return Math.min(u.automated, Math.floor(1 / (u.evidence.maxWeight ?? 1)));
}

/**
 * The labelled items as the policy runs them: each judged by the model that decides it. Without a
 * cascade, the policy's model under its map. With one, as the cascade's certificate judges them
 * at the policy's own first threshold (`cascade-certificate.ts`): the first model where it acts
 * (its top option may be automated and is at or above `autoThreshold`), else the second model
 * under its own map where the row holds its answer (asked when decided, or re-scored), else the
 * first model's answer, the only one the record holds.
 */
function actingItems(policy: Policy, rows: readonly CascadeRow[]): CertifiedItem[] {
  const first = certifiedItems(policy, rows, mapOf(policy));
  if (!policy.cascade?.length) return first;
  const later = cascadeItems(policy, rows, [mapOf(policy), mapOf(tierPolicy(policy, 1))]);
  return first.map((item, i) => {
    const second = later[i]!.second;
    const firstActs = item.automatable && item.confidence >= policy.autoThreshold;
    return firstActs || !second ? item : { ...item, ...second };
  });
}

/**
 * The plan for `goal` from the labels held (`rows`, each judged by the model that decides it:
 * {@link actingItems}): the threshold among those with at least 10 labelled automatable units
 * where the fewest evenly drawn labels are still to get at the observed rate (the lower one on a
 * tie; the policy's own threshold when the labels show nothing yet), that count, and what the
 * labels held are worth toward it. With `frame` (the calibrated top probability of each of the
 * version's decisions whose top option may be automated, from the model that decided it: a
 * record's `topProbability`, what a certification draw reads), a threshold whose labels needed
 * exceed its decisions is out of reach: one within reach is preferred, and the plan says when none
 * is. With `fixed` (the threshold a certification sample was drawn for), the plan keeps that
 * threshold: labels gathered since never move its target.
 */
export function planLabels(
  policy: Policy,
  rows: readonly CascadeRow[],
  goal: CertificateGoal,
  frame?: readonly number[],
  fixed?: number,
): LabelPlan {
  const zeroErrors = zeroErrorLabels(goal);
  // The thresholds a certification sample can be drawn at: none below the policy's own, which is
  // itself one (never the grid point just under it), as a registered plan tests them.
  const at = unitsAtGrid(actingItems(policy, rows), planThresholds(policy.autoThreshold));
  const decisionsAt = (t: number) => frame?.filter((p) => p >= t).length;
  const reach = (t: number, needed: number | null) =>
    needed !== null && (frame === undefined || needed <= decisionsAt(t)!);
  let best: { u: UnitsAt; needed: number | null; remaining: number } | undefined;
  const kept = fixed === undefined ? undefined : (at.find((x) => x.threshold <= fixed) ?? at.at(-1)!);
  for (const u of kept ? [kept] : at.filter((x) => x.automated >= 10)) {
    const rate = u.automated > 0 ? rateOf(u) : 0;
    const needed = rate === 0 ? zeroErrors : (trialsNeeded(rate, goal.maxError, goal.confidence) ?? null);
    if (needed === null) {
      best ??= { u, needed, remaining: Number.POSITIVE_INFINITY };
      continue;
    }
    // Within reach first; then fewest still to get; on a tie the lower threshold (it automates more).
    const remaining = Math.max(0, needed - worthOf(u));
    const better =
      !best ||
      (reach(u.threshold, needed) && !reach(best.u.threshold, best.needed)) ||
      (reach(u.threshold, needed) === reach(best.u.threshold, best.needed) && remaining <= best.remaining);
    if (better) best = { u, needed, remaining };
  }
  const fallback = at.find((u) => u.threshold <= policy.autoThreshold) ?? at.at(-1)!;
  const chosen = best ?? { u: fallback, needed: zeroErrors };
  const { u } = chosen;
  const worth = worthOf(u);
  return {
    ...goal,
    zeroErrors,
    threshold: u.threshold,
    ...(best ? { observed: { units: u.automated, errors: u.errors, rate: rateOf(u) } } : {}),
    needed: chosen.needed,
    held: { labels: rows.length, automatable: u.automated, kinds: u.kinds, worth },
    remaining: chosen.needed === null ? null : Math.max(0, chosen.needed - worth),
    ...(kept ? { fixed: true } : {}),
    ...(frame
      ? {
          frame: {
            decisions: decisionsAt(u.threshold)!,
            outOfReach: !reach(u.threshold, chosen.needed),
          },
        }
      : {}),
  };
}
