/**
 * What a certificate counts at each threshold: the labelled items it would automate, as units of
 * evidence. Each item stands for 1/π decisions (π: its chance of being labelled, known from how it
 * was chosen: an escalation is labelled whenever it is escalated, an audit or certification
 * sample at its draw's rate). Near-duplicates share a `group` and one label, so a group is one
 * unit: its weight is the sum of its members' at or above the threshold, and its vote is one
 * member's, drawn with chance proportional to weight by a hash of the member (never by its
 * label), so the weighted error count stays unbiased and the units stay independent.
 */
import { createHash } from "node:crypto";
import { type BoundEvidence, fayFeuerEvidence } from "./weighted-bound.ts";

/** How a labelled item came to be labelled. */
export const LABEL_KINDS = ["escalation", "audit", "certification", "file"] as const;
/** One of {@link LABEL_KINDS}. */
export type LabelKind = (typeof LABEL_KINDS)[number];

/** One labelled item as the certificate sees it. */
export interface CertifiedItem {
  /** Calibrated top probability. */
  readonly confidence: number;
  /** Whether the top option is not the reviewer's label. */
  readonly wrong: boolean;
  /** Whether the top option may be automated at all (automatable and not out of scope). */
  readonly automatable: boolean;
  /** Its chance of being labelled. @default 1 */
  readonly inclusionProbability?: number;
  /** Near-duplicates share one. @default the item alone */
  readonly group?: string;
  /** A stable name for the item (the representative's draw hashes it). @default its position */
  readonly key?: string;
  /**
   * Put into its group by a reviewer's mark ("duplicate of"), not by its text or the producer:
   * a group holding such a member counts as wrong when any member is, so that a mark can never
   * hide a wrong (or unlabelled) decision behind a right one. @default false
   */
  readonly marked?: boolean;
  /** @default "file" */
  readonly kind?: LabelKind;
  /**
   * Drawn for a label and not labelled (a certification sample still waiting): it counts as wrong
   * wherever a threshold would automate it, so leaving a drawn item unlabelled never helps a claim.
   */
  readonly unlabelled?: boolean;
}

/** The label of a row drawn for a label that has none yet: it matches no option, so it reads as wrong. */
export const UNLABELLED = -1;

/** Counts of labelled items by kind. */
export type KindCounts = Record<LabelKind, number>;

/** What the automatable items at or above one threshold amount to. */
export interface UnitsAt {
  readonly threshold: number;
  /** Units (groups) and wrong units. */
  readonly automated: number;
  readonly errors: number;
  readonly evidence: BoundEvidence;
  /** The bound's evidence if no unit were wrong (depends on the weights only). */
  readonly noErrors: BoundEvidence;
  /** Their weight's share of all labelled items' weight: the estimated share automated. */
  readonly coverage: number;
  /** Labelled items (not units) by kind. */
  readonly kinds: KindCounts;
}

/** A uniform in (0, 1] from a hash: the same item always draws the same number. */
function uniformOf(text: string): number {
  return (createHash("sha256").update(text).digest().readUInt32BE(0) + 1) / 2 ** 32;
}

interface Unit {
  weight: number;
  wrong: boolean;
  /** The smallest −ln(u)/w among its members: its representative (a weighted draw); NaN while alone. */
  race: number;
  /** The first member's key (its race is drawn when a second member comes). */
  key: string;
  members: number;
  /** Whether any member is wrong, and whether any was grouped by a reviewer's mark. */
  anyWrong: boolean;
  marked: boolean;
}

const noKinds = (): KindCounts => ({ escalation: 0, audit: 0, certification: 0, file: 0 });

/**
 * The units at each threshold of `grid` (strictest first), swept once from the most confident
 * item down, so that each group's weight and representative grow as the threshold falls.
 */
export function unitsAtGrid(items: readonly CertifiedItem[], grid: readonly number[]): UnitsAt[] {
  const weightOf = (i: CertifiedItem) => 1 / (i.inclusionProbability ?? 1);
  const total = items.reduce((s, i) => s + weightOf(i), 0);
  const sorted = items
    .map((item, index) => ({ item, key: item.key ?? `#${index}`, group: item.group ?? `#${index}` }))
    .filter((x) => x.item.automatable)
    .sort((a, b) => b.item.confidence - a.item.confidence);
  const equalItems = new Set(sorted.map((x) => weightOf(x.item))).size <= 1;
  const units = new Map<string, Unit>();
  const kinds = noKinds();
  let [errors, wrongWeight, wrongSquares, maxWeight, weight, multi] = [0, 0, 0, 0, 0, 0];
  let n = 0;
  const out: UnitsAt[] = [];
  for (const threshold of grid) {
    for (; n < sorted.length && sorted[n]!.item.confidence >= threshold; n++) {
      const { item, key, group } = sorted[n]!;
      const w = weightOf(item);
      kinds[item.kind ?? "file"]++;
      weight += w;
      // The weighted draw of a representative (exponential race): hashed only once a group has two.
      const race = (k: string, weight: number) => -Math.log(uniformOf(`${group}\u0000${k}`)) / weight;
      const before = units.get(group);
      if (before?.wrong) {
        errors--;
        wrongWeight -= before.weight;
        wrongSquares -= before.weight ** 2;
      }
      const marked = item.marked === true;
      const unit: Unit = before
        ? {
            ...before,
            weight: before.weight + w,
            members: before.members + 1,
            anyWrong: before.anyWrong || item.wrong,
            marked: before.marked || marked,
          }
        : { weight: w, wrong: item.wrong, race: Number.NaN, key, members: 1, anyWrong: item.wrong, marked };
      if (before) {
        const held = Number.isNaN(before.race) ? race(before.key, before.weight) : before.race;
        const mine = race(key, w);
        Object.assign(unit, mine < held ? { race: mine, wrong: item.wrong } : { race: held });
        // A group a reviewer's mark formed speaks with its worst member, not its drawn one.
        if (unit.marked && unit.anyWrong) unit.wrong = true;
      }
      if (before && before.members === 1) multi++;
      units.set(group, unit);
      maxWeight = Math.max(maxWeight, unit.weight);
      if (unit.wrong) {
        errors++;
        wrongWeight += unit.weight;
        wrongSquares += unit.weight ** 2;
      }
    }
    const equal = equalItems && multi === 0;
    const base = { units: units.size, errors };
    const scaled = (wrong: number, wrongSquares: number): BoundEvidence =>
      equal || units.size === 0
        ? { method: "clopper-pearson", ...base }
        : fayFeuerEvidence(base, { total: weight, wrong, wrongSquares, max: maxWeight });
    out.push({
      threshold,
      automated: units.size,
      errors,
      evidence: scaled(wrongWeight, wrongSquares),
      noErrors: { ...scaled(0, 0), errors: 0 },
      coverage: total > 0 ? weight / total : 0,
      kinds: { ...kinds },
    });
  }
  return out;
}
