/**
 * Option-order debiasing. A language model reading lettered options favours some positions (the
 * first letter, the last one) whatever the options say, so the declared order leaks into the
 * distribution. The cyclic order scores a question under the n cyclic rotations of its options,
 * letters reassigned each time, and averages each option's log-probability over the rotations:
 * every option is read once at every position.
 *
 * Rotating the declared order would still depend on it for three or more options (the rotations
 * of A,B,C are not those of A,C,B), so the rotations start from a canonical order (option ids
 * sorted by code point): any ordering of the same options gives the same passes in the same
 * sequence, and hence the same distribution. Pure functions; the scorer runs the passes.
 */
import type { OptionOrder } from "../../shared/domain/contracts/system-one/index.ts";
import { logSumExp } from "../../shared/domain/probability.ts";
import type { LikelihoodDetail } from "./likelihood.ts";

/**
 * The passes to score: for each pass, the declared index of the option shown at each position.
 *
 * @example
 * optionPasses(["b", "a", "c"], "cyclic") // [[1, 0, 2], [0, 2, 1], [2, 1, 0]]  (a,b,c / b,c,a / c,a,b)
 */
export function optionPasses(ids: readonly string[], order: OptionOrder): number[][] {
  const declared = ids.map((_, i) => i);
  if (order === "declared") return [declared];
  const canonical = [...declared].sort((a, b) => (ids[a]! < ids[b]! ? -1 : ids[a]! > ids[b]! ? 1 : 0));
  return canonical.map((_, r) => [...canonical.slice(r), ...canonical.slice(0, r)]);
}

/**
 * Combines the passes' logits into one logit per declared option: each pass is normalized to
 * log-probabilities over its options (so no pass weighs more for being more peaked in absolute
 * terms), mapped back to declared positions, and averaged. With one pass, its logits come back
 * unchanged.
 *
 * @param passes the position-to-declared-index maps of {@link optionPasses}
 * @param logits per pass, the logits in that pass's display order
 */
export function combinePasses(passes: readonly number[][], logits: readonly (readonly number[])[]): number[] {
  if (passes.length !== logits.length) throw new RangeError("one logit list per pass");
  if (passes.length === 1) return mapBack(passes[0]!, logits[0]!);
  const n = passes[0]!.length;
  const sums = new Array<number>(n).fill(0);
  for (const [p, pass] of passes.entries()) {
    const row = logits[p]!;
    const norm = logSumExp(row);
    for (const [position, declared] of pass.entries())
      sums[declared] = sums[declared]! + row[position]! - norm;
  }
  return sums.map((sum) => sum / passes.length);
}

/** Values in a pass's display order, put back in declared order. */
export function mapBack<T>(pass: readonly number[], values: readonly T[]): T[] {
  const out = new Array<T>(pass.length);
  for (const [position, declared] of pass.entries()) out[declared] = values[position]!;
  return out;
}

/** The likelihood detail of the passes (likelihood scoring), averaged in declared order. */
export function combineLikelihoods(
  passes: readonly number[][],
  results: readonly { readonly likelihood?: LikelihoodDetail | undefined }[],
): LikelihoodDetail | undefined {
  const details = results.map((r) => r.likelihood);
  if (details.some((d) => d === undefined)) return undefined;
  const mean = (pick: (d: LikelihoodDetail) => number[]) => {
    const mapped = details.map((d, p) => mapBack(passes[p]!, pick(d!)));
    return mapped[0]!.map((_, i) => mapped.reduce((sum, row) => sum + row[i]!, 0) / mapped.length);
  };
  return { raw: mean((d) => d.raw), normalized: mean((d) => d.normalized), tokens: mean((d) => d.tokens) };
}
