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
 * Up to `size` of `records`, stratified by {@link whatIfStratum}: proportional allocation with one
 * item at least per stratum, the remainder given by largest fractional share. All of them (weight
 * 1) when there are no more than `size`.
 */
export function stratifiedSample<
  T extends { readonly itemId: string; readonly route?: string; readonly chosen?: string },
>(records: readonly T[], size: number): Weighted<T>[] {
  if (!(Number.isInteger(size) && size > 0))
    throw new RangeError(`sample size must be a positive integer, got ${size}`);
  if (records.length <= size) return records.map((record) => ({ record, weight: 1 }));
  const strata = new Map<string, T[]>();
  for (const r of records) {
    const key = whatIfStratum(r);
    const members = strata.get(key);
    if (members) members.push(r);
    else strata.set(key, [r]);
  }
  const groups = [...strata.entries()].sort(([a], [b]) => a.localeCompare(b));
  const exact = groups.map(([, members]) => (size * members.length) / records.length);
  const take = exact.map((x, i) => Math.min(groups[i]![1].length, Math.max(1, Math.floor(x))));
  let left = size - take.reduce((a, b) => a + b, 0);
  const byRemainder = exact.map((x, i) => ({ i, r: x - Math.floor(x) })).sort((a, b) => b.r - a.r);
  for (const { i } of byRemainder) {
    if (left <= 0) break;
    if (take[i]! < groups[i]![1].length) {
      take[i]!++;
      left--;
    }
  }
  return groups.flatMap(([, members], i) => {
    const chosen = members
      .map((record) => ({ record, key: order(record.itemId) }))
      .sort((a, b) => a.key.localeCompare(b.key))
      .slice(0, take[i])
      .map((m) => m.record);
    return chosen.map((record) => ({ record, weight: members.length / chosen.length }));
  });
}
