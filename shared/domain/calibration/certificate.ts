/**
 * Certified automatic action: the lowest auto threshold whose rate of wrong automatic actions has
 * an upper confidence bound under a target, chosen on the same labels without losing the
 * guarantee, as in Learn then Test (Angelopoulos, Bates, Candès, Jordan and Lei, 2021). Each
 * threshold λ of a fixed grid is a hypothesis "the rate of wrong decisions among the items λ
 * automates is above the target"; its p-value is the exact binomial tail of the errors seen among
 * the labelled items λ automates. The hypotheses are tested in a fixed sequence from the strictest
 * threshold down, each at the full level δ = 1 − confidence, stopping at the first that is not
 * rejected: fixed-sequence testing keeps the family-wise error at δ with no multiplicity
 * correction, so with probability at least `confidence` the chosen threshold's true rate is at
 * most the target. Thresholds that automate too few labelled items to ever pass (fewer than
 * ln δ / ln(1 − target)) are left out of the sequence: that depends on the confidences only,
 * never on the labels.
 */
import { binomialCdf, clopperPearsonUpper, trialsNeeded } from "./binomial.ts";

/** What to certify. */
export interface CertificateGoal {
  /** Highest acceptable rate of wrong automatic actions, e.g. 0.02. */
  readonly maxError: number;
  /** Confidence of the bound, e.g. 0.95. */
  readonly confidence: number;
}

/** One labelled item as the certificate sees it. */
export interface CertifiedItem {
  /** Calibrated top probability. */
  readonly confidence: number;
  /** Whether the top option is not the reviewer's label. */
  readonly wrong: boolean;
  /** Whether the top option may be automated at all (automatable and not out of scope). */
  readonly automatable: boolean;
}

/** One threshold of the grid, with what it automates on the labels and its exact upper bound. */
export interface CertificatePoint {
  readonly threshold: number;
  readonly automated: number;
  readonly errors: number;
  readonly coverage: number;
  readonly bound: number;
}

/** The outcome: the certified threshold (null when none qualifies) and what it rests on. */
export interface CertificateResult extends CertificateGoal {
  readonly threshold: number | null;
  readonly automated: number;
  readonly errors: number;
  /** Share of all labelled items the threshold automates. */
  readonly coverage: number;
  /** The Clopper–Pearson upper bound at the threshold (below the target when one qualifies). */
  readonly bound: number | null;
  readonly labels: number;
  /** Fewest automated items a threshold needs before it can pass at all. */
  readonly minAutomated: number;
  /** When none qualifies: the labels needed at the observed error rate (null: no number would do). */
  readonly labelsNeeded?: {
    readonly labels: number | null;
    readonly threshold: number;
    readonly automated: number;
    readonly errors: number;
  };
}

/** The fixed grid, strictest first: 1 − 10^(−j/100) to four decimals, down to 0.5. */
export const CERTIFICATE_GRID: readonly number[] = (() => {
  const grid: number[] = [];
  for (let j = 400; j >= 31; j--) {
    const t = Number((1 - 10 ** (-j / 100)).toFixed(4));
    if (grid.at(-1) !== t) grid.push(t);
  }
  grid.push(0.5);
  return grid;
})();

/** Items automated and wrong at each grid threshold (automatable items only). */
function countsAtGrid(items: readonly CertifiedItem[]): { automated: number; errors: number }[] {
  const sorted = items.filter((i) => i.automatable).sort((a, b) => b.confidence - a.confidence);
  const counts: { automated: number; errors: number }[] = [];
  let n = 0;
  let e = 0;
  for (const threshold of CERTIFICATE_GRID) {
    while (n < sorted.length && sorted[n]!.confidence >= threshold) e += sorted[n++]!.wrong ? 1 : 0;
    counts.push({ automated: n, errors: e });
  }
  return counts;
}

/** Certifies the lowest threshold of the grid that keeps wrong automatic actions under the target. */
export function certifyThreshold(items: readonly CertifiedItem[], goal: CertificateGoal): CertificateResult {
  const delta = 1 - goal.confidence;
  const minAutomated = Math.floor(Math.log(delta) / Math.log(1 - goal.maxError)) + 1;
  const counts = countsAtGrid(items);
  const labels = items.length;
  let chosen = -1;
  for (const [j, c] of counts.entries()) {
    if (c.automated < minAutomated) continue;
    if (binomialCdf(c.errors, c.automated, goal.maxError) > delta) break;
    chosen = j;
  }
  const base = { ...goal, labels, minAutomated };
  if (chosen >= 0) return { ...base, ...pointAt(counts, chosen, labels, goal.confidence) };
  return {
    ...base,
    threshold: null,
    automated: 0,
    errors: 0,
    coverage: 0,
    bound: null,
    ...labelsNeededAt(counts, labels, goal),
  };
}

function pointAt(
  counts: readonly { automated: number; errors: number }[],
  j: number,
  labels: number,
  confidence: number,
): CertificatePoint {
  const c = counts[j]!;
  return {
    threshold: CERTIFICATE_GRID[j]!,
    ...c,
    coverage: labels ? c.automated / labels : 0,
    bound: clopperPearsonUpper(c.errors, c.automated, confidence),
  };
}

/** Up to 40 points of the risk–coverage curve on the grid with their exact bounds (the report's plot). */
export function certificateCurve(items: readonly CertifiedItem[], confidence: number): CertificatePoint[] {
  const counts = countsAtGrid(items);
  const seen = counts.flatMap((c, j) => (c.automated > 0 ? [j] : []));
  const step = Math.max(1, Math.ceil(seen.length / 40));
  return seen
    .filter((_, i) => i % step === 0 || i === seen.length - 1)
    .map((j) => pointAt(counts, j, items.length, confidence));
}

/**
 * At the most promising threshold (the one whose observed error rate would be certified with the
 * fewest labels, among up to 40 of those automating at least 10 labelled items, or the widest),
 * how many labels would certify that rate.
 */
function labelsNeededAt(
  counts: readonly { automated: number; errors: number }[],
  labels: number,
  goal: CertificateGoal,
): Pick<CertificateResult, "labelsNeeded"> {
  const widest = counts.at(-1)!;
  if (widest.automated === 0) return {};
  const enough = counts.flatMap((c, j) => (c.automated >= Math.min(10, widest.automated) ? [j] : []));
  const step = Math.max(1, Math.ceil(enough.length / 40));
  let best: NonNullable<CertificateResult["labelsNeeded"]> | undefined;
  for (const j of enough.filter((_, i) => i % step === 0 || i === enough.length - 1)) {
    const c = counts[j]!;
    const trials = trialsNeeded(c.errors / c.automated, goal.maxError, goal.confidence);
    const needed = trials === undefined ? null : Math.ceil((trials * labels) / c.automated);
    const better = !best || (needed !== null && (best.labels === null || needed < best.labels));
    if (better) best = { labels: needed, threshold: CERTIFICATE_GRID[j]!, ...c };
  }
  return { labelsNeeded: best! };
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const level = (c: number) => `${Number((c * 100).toFixed(2))}%`;

/** The one line the command prints and the report shows. */
export function certificateSentence(result: CertificateResult): string {
  const target = `wrong automatic actions ≤ ${pct(result.maxError)} with ${level(result.confidence)} confidence`;
  if (result.threshold !== null)
    return `auto threshold ${result.threshold}: ${target} (observed ${result.errors} of ${result.automated} automated, coverage ${pct(result.coverage)})`;
  const head = `no auto threshold keeps ${target} on these ${result.labels} labels: every item stays with people`;
  const at = result.labelsNeeded;
  if (!at) return `${head} (no labelled item's top option may be automated)`;
  const observed = `${pct(at.errors / at.automated)}: ${at.errors} of ${at.automated} automated at ${at.threshold}`;
  if (at.labels === null)
    return `${head}; the observed error rate (${observed}) is not below the target, so more labels will not certify it: the model, prompt or policy must change`;
  return `${head}; at the observed error rate (${observed}) about ${at.labels.toLocaleString("en-US")} labels would be needed`;
}
