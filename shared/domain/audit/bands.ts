/**
 * Audit bands: which confidence band an otherwise automatic decision falls in, and the chance
 * it is drawn for audit there (its inclusion probability). The decision record keeps both, so
 * the audit estimate can weight each audited decision by the inverse of its chance.
 */
import type { Policy } from "../policy/policy.ts";

/** The band of one decision and the chance that decisions of that band are audited. */
export interface AuditInclusion {
  /** The band, named by its edges ("<0.95", "0.95-0.99", ">=0.99"), or "all" under a flat rate. */
  readonly band: string;
  readonly inclusionProbability: number;
}

/** The name of band `index` of `edges`. */
export function bandName(edges: readonly number[], index: number): string {
  if (index === 0) return `<${edges[0]}`;
  if (index === edges.length) return `>=${edges[edges.length - 1]}`;
  return `${edges[index - 1]}-${edges[index]}`;
}

/** Where a band named by {@link bandName} starts (0 for the first band and for "all"), to sort bands. */
export function bandStart(band: string): number {
  if (band.startsWith(">=")) return Number(band.slice(2));
  const dash = band.indexOf("-");
  return dash > 0 ? Number(band.slice(0, dash)) : 0;
}

/**
 * The audit band and inclusion probability of a decision with calibrated top probability
 * `topProbability` that would otherwise be automated: the policy's `auditBands` when it has
 * them, else one band at its flat `auditSampleRate`.
 */
export function auditInclusion(
  policy: Pick<Policy, "auditSampleRate" | "auditBands">,
  topProbability: number,
): AuditInclusion {
  const bands = policy.auditBands;
  if (!bands) return { band: "all", inclusionProbability: policy.auditSampleRate };
  const index = bands.edges.filter((edge) => topProbability >= edge).length;
  return { band: bandName(bands.edges, index), inclusionProbability: bands.rates[index]! };
}
