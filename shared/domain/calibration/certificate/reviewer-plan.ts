/**
 * What reviewers' own mistakes cost a certificate, for `calibrate --plan` and `decide review
 * accuracy`. A certificate counts every label that differs from the model's answer as the model's
 * error; it does not correct for label error. A reviewer wrong on a right answer spends the
 * target's budget (the bound is stricter than it need be); a reviewer who agrees with a wrong
 * answer hides one (the bound is looser than it says: gold items the model gets wrong measure
 * that). The figures: with per-reviewer error e, one review leaves e of the labels wrong; two
 * independent reviews with the disagreements settled by an adjudicator leave e² (both wrong the
 * same way, at most) plus 2e(1 − e)·a (a disagreement the adjudicator, wrong at rate a, settles
 * wrongly). Pure.
 */

/** The share of a target's budget label error may take before the plan warns. */
export const LABEL_ERROR_SHARE = 0.1;

/** The label error rate left by one review, and by two with adjudication. */
export function labelErrorRates(
  accuracy: number,
  adjudicatorAccuracy = accuracy,
): { single: number; double: number } {
  const e = 1 - accuracy;
  const a = 1 - adjudicatorAccuracy;
  return { single: e, double: e * e + 2 * e * (1 - e) * a };
}

/** The lowest per-reviewer accuracy whose label error stays within `share` of `maxError` (adjudicator as accurate). */
export function accuracyNeeded(maxError: number, reviewers: 1 | 2, share = LABEL_ERROR_SHARE): number {
  const budget = share * maxError;
  if (reviewers === 1) return 1 - budget;
  // The double-review rate grows with e on [0, 0.5]: bisect for the largest e within budget.
  let [lo, hi] = [0, 0.5];
  for (let i = 0; i < 60; i++) {
    const mid = (lo + hi) / 2;
    if (labelErrorRates(1 - mid).double <= budget) lo = mid;
    else hi = mid;
  }
  return 1 - lo;
}

const pct = (x: number, digits = 1) => `${(100 * x).toFixed(digits)}%`;
/** A small rate with enough digits to read: 0.01%, 0.3%, 1.0%. */
const small = (x: number) => pct(x, x < 0.001 ? 2 : 1);

/**
 * The plan's lines on reviewers for a target `maxError`: what accuracy it needs with one review
 * and with two, and, at `accuracy` (the measured one, else 99% as an example), what share of the
 * budget each spends on label error.
 */
export function reviewerPlanLines(maxError: number, accuracy?: number, reviewers: 1 | 2 = 2): string[] {
  const at = accuracy ?? 0.99;
  const { single, double } = labelErrorRates(at);
  const source =
    accuracy === undefined
      ? "at 99% per reviewer (an example; measure yours with gold items)"
      : `at the ${pct(at)} measured on gold items`;
  const share = (rate: number) =>
    `${small(rate)} of labels wrong, ${pct(Math.min(1, rate / maxError), 0)} of the ${pct(maxError)} budget`;
  return [
    `reviewers: a ${pct(maxError)} target counts wrong labels as the model's errors; for label error to take at most ${pct(LABEL_ERROR_SHARE, 0)} of it, one review needs ${pct(accuracyNeeded(maxError, 1))} accuracy per reviewer, two reviews with adjudication ${pct(accuracyNeeded(maxError, 2))}`,
    `reviewers ${source}: one review leaves ${share(single)}; two with adjudication leave ${share(double)}${reviewers === 1 ? " (this policy has certificationReviewers: 1)" : " (certification samples are reviewed twice: certificationReviewers 2)"}`,
  ];
}
