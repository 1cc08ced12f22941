/**
 * Certified automatic action: the lowest auto threshold whose rate of wrong automatic actions has
 * an upper confidence bound under a target, chosen on the same labels without losing the
 * guarantee, as in Learn then Test (Angelopoulos, Bates, Candès, Jordan and Lei, 2021). Each
 * threshold λ of a fixed grid is a hypothesis "the rate of wrong decisions among the items λ
 * automates is above the target", tested in a fixed sequence from the strictest threshold down
 * (`fixed-sequence.ts`). Its test is the upper bound of the labelled items λ automates, each
 * standing for the decisions it was chosen to represent (`certificate-units.ts`): the exact
 * binomial (Clopper–Pearson) bound when they all stand for as many, the gamma bound of Fay and
 * Feuer otherwise (`weighted-bound.ts`). So labels chosen unevenly (escalations all labelled,
 * audit samples at a few percent) count as what they are, and near-duplicates once. Thresholds
 * whose bound could not pass even with no error are left out of the sequence: that depends on
 * what was labelled, never on the labels.
 */
import { trialsNeeded } from "./binomial.ts";
import { type CertifiedItem, type KindCounts, type UnitsAt, unitsAtGrid } from "./certificate-units.ts";
import { fixedSequence } from "./fixed-sequence.ts";
import { LEARN_THEN_TEST_KIND } from "./registered-kind.ts";
import { type BoundEvidence, boundOf } from "./weighted-bound.ts";

export type { CertifiedItem } from "./certificate-units.ts";

/** What to certify. */
export interface CertificateGoal {
  /** Highest acceptable rate of wrong automatic actions, e.g. 0.02. */
  readonly maxError: number;
  /** Confidence of the bound, e.g. 0.95. */
  readonly confidence: number;
}

/** One threshold of the grid, with what it automates on the labels and its upper bound. */
export interface CertificatePoint {
  readonly threshold: number;
  /** Units (items, or groups of near-duplicates) it automates, and how many were wrong. */
  readonly automated: number;
  readonly errors: number;
  /** Estimated share of all decisions it automates (labelled items weighted by what they stand for). */
  readonly coverage: number;
  readonly bound: number;
}

/** The outcome: the certified threshold (null when none qualifies) and what it rests on. */
export interface CertificateResult extends CertificateGoal {
  readonly threshold: number | null;
  readonly automated: number;
  readonly errors: number;
  readonly coverage: number;
  /** The upper bound at the threshold (below the target when one qualifies). */
  readonly bound: number | null;
  /** How the bound was computed, with what it needs to be recomputed. */
  readonly evidence?: BoundEvidence;
  /** Labelled items at or above the threshold by how they came to be labelled. */
  readonly kinds?: KindCounts;
  /** Items it rests on: the labelled ones and the drawn ones not labelled ({@link unlabelled}). */
  readonly labels: number;
  /**
   * Items drawn for a label (certification samples) and not labelled by the time it was made:
   * each counts as wrong wherever a threshold automates it. Absent when there are none.
   */
  readonly unlabelled?: number;
  /** Fewest automated items an evenly chosen set needs before a threshold can pass at all. */
  readonly minAutomated: number;
  /** When none qualifies: the labels needed at the observed error rate (null: no number would do). */
  readonly labelsNeeded?: {
    readonly labels: number | null;
    /** Of those, labels of items the threshold would automate. */
    readonly automatable: number | null;
    readonly threshold: number;
    readonly automated: number;
    readonly errors: number;
  };
}

/** What the registered certificate rests on, beside the counts every certificate has. */
interface RegisteredFacts {
  readonly sample: string;
  /** Decisions the plan drew. */
  readonly n: number;
  /** Of them, not labelled (or not settled) by the time it was made, or not found: counted as wrong. */
  readonly unlabelled: number;
  /** The confidence it was tested at, and which plan of the version it was. */
  readonly level: number;
  readonly round: number;
}

/** A registered certificate: the bound is at the plan's level; `confidence` is the claim's. */
export type RegisteredResult = CertificateResult & { readonly registered: RegisteredFacts };

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

/** Fewest evenly chosen labels, all right, whose exact bound is under the target. */
export function zeroErrorLabels(goal: CertificateGoal): number {
  return Math.floor(Math.log(1 - goal.confidence) / Math.log(1 - goal.maxError)) + 1;
}

/**
 * Certifies the lowest threshold of the grid that keeps wrong automatic actions under the target.
 * `floor`: thresholds below it are left out (they would reach decisions no one could have
 * labelled: `label-selection.ts`, `thresholdFloor`). @default 0
 */
export function certifyThreshold(
  items: readonly CertifiedItem[],
  goal: CertificateGoal,
  floor = 0,
): CertificateResult {
  const at = unitsAtGrid(items, CERTIFICATE_GRID);
  const bound = (e: BoundEvidence) => boundOf(e, goal.confidence);
  const chosen = fixedSequence(at, {
    eligible: (u) => u.threshold >= floor && u.automated > 0 && bound(u.noErrors) <= goal.maxError,
    passes: (u) => bound(u.evidence) <= goal.maxError,
  });
  const unlabelled = items.filter((i) => i.unlabelled).length;
  const base = {
    ...goal,
    labels: items.length,
    ...(unlabelled > 0 ? { unlabelled } : {}),
    minAutomated: zeroErrorLabels(goal),
  };
  if (chosen >= 0) {
    const u = at[chosen]!;
    return { ...base, ...pointOf(u, chosen, goal.confidence), evidence: u.evidence, kinds: u.kinds };
  }
  return {
    ...base,
    threshold: null,
    automated: 0,
    errors: 0,
    coverage: 0,
    bound: null,
    ...labelsNeededAt(at, items.length - unlabelled, goal),
  };
}

function pointOf(u: UnitsAt, j: number, confidence: number): CertificatePoint {
  return {
    threshold: CERTIFICATE_GRID[j]!,
    automated: u.automated,
    errors: u.errors,
    coverage: u.coverage,
    bound: boundOf(u.evidence, confidence),
  };
}

/** Up to 40 points of the risk–coverage curve on the grid with their bounds (the report's plot). */
export function certificateCurve(items: readonly CertifiedItem[], confidence: number): CertificatePoint[] {
  const at = unitsAtGrid(items, CERTIFICATE_GRID);
  const seen = at.flatMap((u, j) => (u.automated > 0 ? [j] : []));
  const step = Math.max(1, Math.ceil(seen.length / 40));
  return seen
    .filter((_, i) => i % step === 0 || i === seen.length - 1)
    .map((j) => pointOf(at[j]!, j, confidence));
}

/**
 * At the most promising threshold (the one whose observed error rate would be certified with the
 * fewest labels, among up to 12 of those automating at least 10 labelled items, or the widest),
 * how many labels would certify that rate, if they were chosen as evenly as a certification
 * sample is.
 */
function labelsNeededAt(
  at: readonly UnitsAt[],
  labels: number,
  goal: CertificateGoal,
): Pick<CertificateResult, "labelsNeeded"> {
  const widest = at.at(-1)!;
  if (widest.automated === 0) return {};
  const enough = at.flatMap((c, j) => (c.automated >= Math.min(10, widest.automated) ? [j] : []));
  const step = Math.max(1, Math.ceil(enough.length / 12));
  let best: NonNullable<CertificateResult["labelsNeeded"]> | undefined;
  for (const j of enough.filter((_, i) => i % step === 0 || i === enough.length - 1)) {
    const c = at[j]!;
    const trials = trialsNeeded(c.errors / c.automated, goal.maxError, goal.confidence);
    const needed = trials === undefined ? null : Math.ceil((trials * labels) / c.automated);
    const better = !best || (needed !== null && (best.labels === null || needed < best.labels));
    if (better)
      best = {
        labels: needed,
        automatable: trials ?? null,
        threshold: CERTIFICATE_GRID[j]!,
        automated: c.automated,
        errors: c.errors,
      };
  }
  return { labelsNeeded: best! };
}

const pct = (x: number) => `${(x * 100).toFixed(1)}%`;
const level = (c: number) => `${Number((c * 100).toFixed(2))}%`;

/** "150 certification samples, 20 audit samples, 12 escalations" (the kinds present). */
export function kindsText(kinds: KindCounts): string {
  const names = {
    certification: "certification samples",
    audit: "audit samples",
    escalation: "escalations",
    file: "from a file",
  };
  return (Object.keys(names) as (keyof KindCounts)[])
    .filter((k) => kinds[k] > 0)
    .map((k) => `${kinds[k]} ${names[k]}`)
    .join(", ");
}

/**
 * "; 3 drawn samples (certification or audit) not labelled yet count as wrong: label them ...":
 * what the certificate did with the drawn items nobody labelled (nothing when there are none).
 */
function unlabelledText(unlabelled: number | undefined): string {
  if (!unlabelled) return "";
  const items =
    unlabelled === 1
      ? "1 drawn sample (certification or audit) is"
      : `${unlabelled} drawn samples (certification or audit) are`;
  return `; ${items} not labelled yet and counted as wrong (label them in the review queue, then propose again)`;
}

const pct2 = (x: number) => `${Number((x * 100).toFixed(2))}%`;

/** The kind every registered certificate line names. */
const REGISTERED_KIND = "pre-registered sample";

/** The one line a registered certificate prints: which plan, what it certifies, on what. */
export function registeredSentence(r: RegisteredResult): string {
  const f = r.registered;
  const target = `wrong automatic actions ≤ ${pct2(r.maxError)} with ${pct2(r.confidence)} confidence`;
  const plan = `${REGISTERED_KIND} ${f.sample} (plan ${f.round} of this version, tested at ${pct2(f.level)})`;
  const missing =
    f.unlabelled > 0
      ? `; ${f.unlabelled} of its ${f.n} drawn decisions not labelled (or not settled) count as wrong: label them in the review queue, then propose again`
      : "";
  if (r.threshold === null)
    return `no certificate from the ${plan}: no threshold of its sequence keeps ${target} on its ${f.n} drawn decisions${missing}`;
  return `auto threshold ${r.threshold}, ${plan}: ${target} among decisions whose acting model's calibrated top probability is at least ${r.threshold} (observed ${r.errors} wrong of ${r.automated} drawn at or above it, bound ${pct2(r.bound!)}${missing})`;
}

/**
 * The one line the command prints and the report shows, naming the certificate's kind: a
 * registered plan's (`registered-certificate.ts`), or learn-then-test on the labels held.
 */
export function certificateSentence(result: CertificateResult | RegisteredResult): string {
  if ("registered" in result) return registeredSentence(result);
  return `${learnThenTestSentence(result)} [${LEARN_THEN_TEST_KIND}]`;
}

function learnThenTestSentence(result: CertificateResult): string {
  const target = `wrong automatic actions ≤ ${pct(result.maxError)} with ${level(result.confidence)} confidence`;
  const missing = unlabelledText(result.unlabelled);
  if (result.threshold !== null) {
    const kinds = result.kinds ? kindsText(result.kinds) : "";
    const from = kinds && !/^\d+ from a file$/.test(kinds) ? `; labels: ${kinds}` : "";
    return `auto threshold ${result.threshold}: ${target} (observed ${result.errors} of ${result.automated} automated, coverage ${pct(result.coverage)}${from}${missing})`;
  }
  const head = `no certificate: applying this sends every item to people (no auto threshold keeps ${target} on these ${result.labels - (result.unlabelled ?? 0)} labels${missing})`;
  const at = result.labelsNeeded;
  if (!at) return `${head}: no labelled item's top option may be automated`;
  const observed = `${pct(at.errors / at.automated)}: ${at.errors} of ${at.automated} automated at ${at.threshold}`;
  if (at.labels === null)
    return `${head}; the observed error rate (${observed}) is not below the target, so more labels will not certify it: the model, prompt or policy must change`;
  const automatable =
    at.automatable === null
      ? ""
      : `, ${at.automatable.toLocaleString("en-US")} of them of items it would automate`;
  return `${head}; at the observed error rate (${observed}) about ${at.labels.toLocaleString("en-US")} labels would be needed${automatable}`;
}
