/**
 * The stratified sample `decide what-if` re-scores: recent decisions grouped by their live route
 * and chosen option, each group sampled in proportion to its size (at least one item per group,
 * so a rare option is never left out), each item chosen by the hash of its id (the same table
 * gives the same sample), and weighted by how many decisions of its group it stands for.
 */
import { createHash } from "node:crypto";

/** One sampled item and the decisions it stands for. */
export interface Weighted<T> {
  readonly record: T;
  readonly weight: number;
}

/** The stratum of a decision: its live route and chosen option. */
export function whatIfStratum(record: { readonly route?: string; readonly chosen?: string }): string {
  return `${record.route ?? "-"}|${record.chosen ?? "-"}`;
}

const order = (id: string) => createHash("sha256").update(`what-if\n${id}`).digest("hex");

/**
 * The stratified sample drawn while the records stream past: each stratum keeps its count and
 * only the `size` records with the smallest id hashes (no stratum takes more), so memory is
 * bounded by the sample size times the strata, never by the window it is drawn from.
 */
export class StratifiedSampler<
  T extends { readonly itemId: string; readonly route?: string; readonly chosen?: string },
> {
  private readonly strata = new Map<string, { count: number; kept: { record: T; key: string }[] }>();
  private total = 0;

  constructor(private readonly size: number) {
    if (!(Number.isInteger(size) && size > 0))
      throw new RangeError(`sample size must be a positive integer, got ${size}`);
  }

  /** Records seen so far. */
  get count(): number {
    return this.total;
  }

  /** Records held now (at most the sample size per stratum). */
  get retained(): number {
    let held = 0;
    for (const stratum of this.strata.values()) held += stratum.kept.length;
    return held;
  }

  /** Takes one record in. */
  add(record: T): void {
    this.total++;
    const name = whatIfStratum(record);
    let stratum = this.strata.get(name);
    if (!stratum) {
      stratum = { count: 0, kept: [] };
      this.strata.set(name, stratum);
    }
    stratum.count++;
    const key = order(record.itemId);
    const { kept } = stratum;
    if (kept.length === this.size && key >= kept[kept.length - 1]!.key) return;
    let low = 0;
    let high = kept.length;
    while (low < high) {
      const mid = (low + high) >> 1;
      if (kept[mid]!.key < key) low = mid + 1;
      else high = mid;
    }
    kept.splice(low, 0, { record, key });
    if (kept.length > this.size) kept.pop();
  }

  /**
   * Up to `size` of the records, stratified by {@link whatIfStratum}: proportional allocation
   * with one item at least per stratum, the remainder given by largest fractional share. All of
   * them (weight 1) when there were no more than `size`.
   */
  sample(): Weighted<T>[] {
    const groups = [...this.strata.entries()].sort(([a], [b]) => a.localeCompare(b));
    if (this.total <= this.size)
      return groups.flatMap(([, g]) => g.kept.map(({ record }) => ({ record, weight: 1 })));
    const exact = groups.map(([, g]) => (this.size * g.count) / this.total);
    const take = exact.map((x, i) => Math.min(groups[i]![1].count, Math.max(1, Math.floor(x))));
    let left = this.size - take.reduce((a, b) => a + b, 0);
    const byRemainder = exact.map((x, i) => ({ i, r: x - Math.floor(x) })).sort((a, b) => b.r - a.r);
    for (const { i } of byRemainder) {
      if (left <= 0) break;
      if (take[i]! < groups[i]![1].count) {
        take[i]!++;
        left--;
      }
    }
    return groups.flatMap(([, g], i) => {
      const chosen = g.kept.slice(0, take[i]).map((m) => m.record);
      return chosen.map((record) => ({ record, weight: g.count / chosen.length }));
    });
  }
}

/** {@link StratifiedSampler} over records already in memory. */
export function stratifiedSample<
  T extends { readonly itemId: string; readonly route?: string; readonly chosen?: string },
>(records: readonly T[], size: number): Weighted<T>[] {
  const sampler = new StratifiedSampler<T>(size);
  for (const record of records) sampler.add(record);
  return sampler.sample();
}
