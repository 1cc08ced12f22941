/**
 * Drift: recent decisions compared with the calibration baseline (mean confidence, escalation
 * rate, allowed-token mass, option mix). Outside the bounds, the pipeline emits
 * "Calibration Drift" and the policy should be recalibrated. Pure.
 */

/** What the calibration saw (from the summary's `baseline`). */
export interface DriftBaseline {
  readonly meanConfidence: number;
  readonly escalationRate: number;
  readonly optionMix: readonly number[];
  readonly meanAllowedTokenMass?: number;
}

/** One recent decision. */
export interface RecentDecision {
  /** Calibrated probabilities in the policy's option order. */
  readonly probabilities: readonly number[];
  readonly route: "auto" | "human";
  readonly allowedTokenMass?: number | null;
}

/** Bounds of each check. */
export interface DriftBounds {
  /** @default 0.05 */
  readonly meanConfidence?: number;
  /** @default 0.1 */
  readonly escalationRate?: number;
  /** Total variation distance between option mixes. @default 0.15 */
  readonly optionMix?: number;
  /** Largest relative fall of the mean allowed-token mass. @default 0.3 */
  readonly allowedTokenMassDrop?: number;
}

/** One check's outcome. */
export interface DriftCheck {
  readonly name: "mean_confidence" | "escalation_rate" | "option_mix" | "allowed_token_mass";
  readonly baseline: number;
  readonly recent: number;
  readonly bound: number;
  readonly drifted: boolean;
}

/** Compares recent decisions with the baseline. */
export function checkDrift(
  baseline: DriftBaseline,
  recent: readonly RecentDecision[],
  bounds: DriftBounds = {},
): { drifted: boolean; checks: DriftCheck[]; decisions: number } {
  if (recent.length === 0) return { drifted: false, checks: [], decisions: 0 };
  const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / values.length;
  const confidence = mean(recent.map((r) => Math.max(...r.probabilities)));
  const escalation = recent.filter((r) => r.route === "human").length / recent.length;
  const mix = baseline.optionMix.map(
    (_, k) =>
      recent.filter((r) => r.probabilities.indexOf(Math.max(...r.probabilities)) === k).length /
      recent.length,
  );
  const tvd = mix.reduce((s, m, k) => s + Math.abs(m - (baseline.optionMix[k] ?? 0)), 0) / 2;
  const checks: DriftCheck[] = [
    {
      name: "mean_confidence",
      baseline: baseline.meanConfidence,
      recent: confidence,
      bound: bounds.meanConfidence ?? 0.05,
      drifted: false,
    },
    {
      name: "escalation_rate",
      baseline: baseline.escalationRate,
      recent: escalation,
      bound: bounds.escalationRate ?? 0.1,
      drifted: false,
    },
    { name: "option_mix", baseline: 0, recent: tvd, bound: bounds.optionMix ?? 0.15, drifted: false },
  ].map((c) => ({ ...c, drifted: Math.abs(c.recent - c.baseline) > c.bound })) as DriftCheck[];
  const masses = recent.map((r) => r.allowedTokenMass).filter((m): m is number => typeof m === "number");
  if (baseline.meanAllowedTokenMass !== undefined && masses.length > 0) {
    const drop = bounds.allowedTokenMassDrop ?? 0.3;
    const recentMass = mean(masses);
    checks.push({
      name: "allowed_token_mass",
      baseline: baseline.meanAllowedTokenMass,
      recent: recentMass,
      bound: drop,
      drifted: recentMass < baseline.meanAllowedTokenMass * (1 - drop),
    });
  }
  return { drifted: checks.some((c) => c.drifted), checks, decisions: recent.length };
}
