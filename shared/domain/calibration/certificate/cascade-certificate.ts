/**
 * One certified budget over every automatic action of a two-tier cascade: the pair of thresholds
 * (first tier, second tier) whose rate of wrong automatic actions, over everything either tier
 * automates, has an upper confidence bound under the target, chosen on the same labels without
 * losing the guarantee, and among the pairs that qualify the one that sends fewest items to people.
 *
 * The method is Learn then Test (Angelopoulos, Bates, Candès, Jordan and Lei, 2021,
 * arXiv:2110.01052): each pair of a fixed grid is a hypothesis "this pair's rate is above the
 * target"; the hypotheses are tested one by one in an order fixed before any label is read, each
 * at the full level, stopping at the first that is not rejected (`fixed-sequence.ts`). Every pair
 * rejected before the stop is certified together with the others, with at most 1 − confidence
 * chance that any of them is not safe, so picking the cheapest of them keeps the guarantee. The
 * order walks the grid in shells from the strictest corner: shell k holds the pairs whose looser
 * threshold is the k-th of the grid, the other threshold going from strictest to k-th, the pair
 * (k-th, k-th) last. It never reads the data, so it is fixed in advance as the method needs.
 *
 * Each pair's test is the one the single-tier certificate makes (`certificate-units.ts`,
 * `weighted-bound.ts`): the labelled items it automates (those the first tier acts on, and of the
 * rest those the second tier acts on, each judged by the tier that acts), each standing for 1/π
 * decisions, with the exact binomial bound when all weigh the same and Fay–Feuer's otherwise.
 *
 * What it assumes of the labels: each labelled item's chance of being labelled (π) is known and
 * does not depend on its label: a certification or audit sample drawn at a known rate, or
 * escalations all labelled (π = 1) beside audit samples of the automated items. Labels of only
 * the items routing sent to people would leave out every item a looser pair newly automates, and
 * the estimate would be biased; with their π the weights put them back. And for an item the first
 * tier acted on when it was decided, the second tier was never asked: a pair whose first
 * threshold would send such an item on to the second tier cannot be judged and is left out of the
 * sequence (which items those are depends on the first tier's confidence, never on the labels).
 */
import type { CertificateGoal } from "./certificate.ts";
import {
  type CertifiedItem,
  type KindCounts,
  type LabelKind,
  type UnitsAt,
  unitsAtGrid,
} from "./certificate-units.ts";
import { fixedSequence } from "./fixed-sequence.ts";
import { type BoundEvidence, boundOf } from "./weighted-bound.ts";

/** One tier's answer on a labelled item, judged against the item's label. */
export interface TierJudgement {
  /** The tier's calibrated top probability. */
  readonly confidence: number;
  /** Whether its top option is not the reviewer's label. */
  readonly wrong: boolean;
  /** Whether its top option may be automated at all (automatable and not out of scope). */
  readonly automatable: boolean;
}

/** One labelled item as a cascade's record gives it. */
export interface CascadeItem {
  readonly first: TierJudgement;
  /** The second tier's answer; absent where it was not asked (the first tier acted). */
  readonly second?: TierJudgement | undefined;
  /** Its chance of being labelled. @default 1 */
  readonly inclusionProbability?: number;
  /** Near-duplicates share one. @default the item alone */
  readonly group?: string;
  /** A stable name for the item. @default its position */
  readonly key?: string;
  /** @default "file" */
  readonly kind?: LabelKind;
}

/** The certified pair (null when none qualifies) and what it rests on. */
export interface CascadeCertificateResult extends CertificateGoal {
  /** The first and the second tier's thresholds. */
  readonly thresholds: readonly [number, number] | null;
  /** Units automated by either tier at the pair, and how many were wrong. */
  readonly automated: number;
  readonly errors: number;
  /** Labelled items each tier automates at the pair. */
  readonly byTier: readonly [number, number];
  /** Estimated share of all decisions automated (labelled items weighted by what they stand for). */
  readonly coverage: number;
  readonly bound: number | null;
  readonly evidence?: BoundEvidence;
  readonly kinds?: KindCounts;
  readonly labels: number;
  /** Pairs the sequence tested before it stopped, all certified (the chosen one among them). */
  readonly certifiedPairs: number;
  /** Pairs reached but left out because some item they pass on was not asked of the second tier. */
  readonly unjudgeable: number;
}

/**
 * Each tier's threshold grid, strictest first: 1 − 10^(−j/10) to four decimals, 0.9999 down, the
 * last at 0.5 (the lowest auto threshold a policy may have) rather than 0.4988.
 */
export const CASCADE_GRID: readonly number[] = Array.from({ length: 38 }, (_, i) =>
  Math.max(0.5, Number((1 - 10 ** (-(40 - i) / 10)).toFixed(4))),
);

/** The pairs of grid indices (first, second) in the sequence's fixed order: shells from the strictest corner. */
export function cascadeOrder(size: number): [number, number][] {
  const order: [number, number][] = [];
  for (let k = 0; k < size; k++) {
    for (let j = 0; j < k; j++) order.push([k, j], [j, k]);
    order.push([k, k]);
  }
  return order;
}

// Above every threshold: an item the first tier acts on is automated whatever the second's is.
const ACTED = 2;

/** Each item as the second tier's sweep sees it: when the first tier acts, and when it passes it on. */
interface Seen {
  readonly firstConfidence: number;
  readonly acted?: CertifiedItem;
  readonly passed?: CertifiedItem;
}

function seenOf(items: readonly CascadeItem[]): Seen[] {
  return items.map((item, index) => {
    const common = {
      key: item.key ?? `#${index}`,
      ...(item.inclusionProbability !== undefined ? { inclusionProbability: item.inclusionProbability } : {}),
      ...(item.group !== undefined ? { group: item.group } : {}),
      ...(item.kind !== undefined ? { kind: item.kind } : {}),
    };
    return {
      firstConfidence: item.first.automatable ? item.first.confidence : Number.NEGATIVE_INFINITY,
      ...(item.first.automatable ? { acted: { ...item.first, ...common, confidence: ACTED } } : {}),
      ...(item.second ? { passed: { ...item.second, ...common } } : {}),
    };
  });
}

/**
 * The items once the first threshold is `t1`: those the first tier acts on always automated,
 * judged by it; the rest carry the second tier's answer. Undefined when an item passed on has no
 * second answer (the pair cannot be judged).
 */
function passedOn(seen: readonly Seen[], t1: number): CertifiedItem[] | undefined {
  const out: CertifiedItem[] = [];
  for (const s of seen) {
    const judged = s.firstConfidence >= t1 ? s.acted : s.passed;
    if (!judged) return undefined;
    out.push(judged);
  }
  return out;
}

/**
 * Certifies the pair of thresholds that keeps wrong automatic actions over both tiers under the
 * target and sends fewest items to people. Exactly two tiers: a longer cascade's later tiers
 * would need a grid of their own. `floor`: the lowest threshold the labels may speak for (as for
 * one tier, `label-selection.ts`); a pair with either threshold below it is left out.
 * @example certifyCascade(items, { maxError: 0.02, confidence: 0.95 }).thresholds // e.g. [0.9499, 0.9369]
 */
export function certifyCascade(
  items: readonly CascadeItem[],
  goal: CertificateGoal,
  floor = 0,
): CascadeCertificateResult {
  const seen = seenOf(items);
  // A first threshold's row is swept only once the sequence reaches it (it usually stops early).
  const rows = new Map<number, UnitsAt[] | undefined>();
  const rowOf = (i: number) => {
    if (!rows.has(i)) {
      const judged = passedOn(seen, CASCADE_GRID[i]!);
      rows.set(i, judged && unitsAtGrid(judged, CASCADE_GRID));
    }
    return rows.get(i);
  };
  const order = cascadeOrder(CASCADE_GRID.length);
  const bound = (e: BoundEvidence) => boundOf(e, goal.confidence);
  const unitsOf = ([i, j]: [number, number]) => rowOf(i)?.[j];
  const eligible = (pair: [number, number]) => {
    if (CASCADE_GRID[pair[0]]! < floor || CASCADE_GRID[pair[1]]! < floor) return false;
    const u = unitsOf(pair);
    return u !== undefined && u.automated > 0 && bound(u.noErrors) <= goal.maxError;
  };
  const last = fixedSequence(order, {
    eligible,
    passes: (pair) => bound(unitsOf(pair)!.evidence) <= goal.maxError,
  });
  const certified = order.slice(0, last + 1).filter(eligible);
  const base = {
    ...goal,
    labels: items.length,
    certifiedPairs: certified.length,
    unjudgeable: [...rows.values()].filter((r) => r === undefined).length * CASCADE_GRID.length,
  };
  // The largest estimated share automated (fewest to people); on a tie the earlier, stricter pair.
  const best = certified.reduce<[number, number] | undefined>(
    (a, p) => (a === undefined || unitsOf(p)!.coverage > unitsOf(a)!.coverage ? p : a),
    undefined,
  );
  if (!best)
    return { ...base, thresholds: null, automated: 0, errors: 0, byTier: [0, 0], coverage: 0, bound: null };
  const u = unitsOf(best)!;
  const [t1, t2] = [CASCADE_GRID[best[0]]!, CASCADE_GRID[best[1]]!];
  const first = items.filter((i) => i.first.automatable && i.first.confidence >= t1).length;
  return {
    ...base,
    thresholds: [t1, t2],
    automated: u.automated,
    errors: u.errors,
    byTier: [first, u.kinds.escalation + u.kinds.audit + u.kinds.certification + u.kinds.file - first],
    coverage: u.coverage,
    bound: bound(u.evidence),
    evidence: u.evidence,
    kinds: u.kinds,
  };
}
