/**
 * Fixed-sequence testing, the selection step of Learn then Test (Angelopoulos, Bates, Candès,
 * Jordan and Lei, 2021, arXiv:2110.01052): hypotheses in an order fixed before the labels are
 * seen ("candidate k is not safe"), each tested at the full level δ, in that order, stopping at
 * the first that is not rejected. The chance of declaring any unsafe candidate safe stays at most
 * δ with no multiplicity correction, because a wrong rejection can only happen at the first
 * unsafe candidate reached. Candidates a test could never pass whatever the labels (too little
 * evidence to reject at δ, judged from what was chosen for labelling, never from the labels) are
 * left out of the sequence. Kept apart from thresholds so that an ordered list of anything (one
 * threshold, a pair of thresholds of a cascade) can be certified the same way.
 */

/** How each candidate is judged. */
export interface SequenceTest<T> {
  /** Whether the candidate can pass at all; must not read the labels. */
  readonly eligible: (candidate: T) => boolean;
  /** Whether its hypothesis is rejected at δ: the candidate is certified safe. */
  readonly passes: (candidate: T) => boolean;
}

/** The index of the last candidate certified along the sequence, or -1 when none is. */
export function fixedSequence<T>(candidates: readonly T[], test: SequenceTest<T>): number {
  let chosen = -1;
  for (const [i, candidate] of candidates.entries()) {
    if (!test.eligible(candidate)) continue;
    if (!test.passes(candidate)) break;
    chosen = i;
  }
  return chosen;
}
