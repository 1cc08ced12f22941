/**
 * The live checks' part of the topology (`../topology.ts` re-exports it, so every number is still
 * read from the topology): the daily audit estimate and `decide what-if`.
 */

/**
 * Live audits: the days of decisions the daily estimate reads, the confidence of its interval,
 * the labels per audit band below which the estimate warns that the band is thinly audited, and
 * the hours after which an audit sample still waiting for its label is overdue: the budget
 * verdict then reads it as wrong when it asks whether the policy is within its budget (a sample
 * skipped because it is hard must not make the estimate look better).
 */
export const AUDIT = {
  windowDays: 30,
  confidence: 0.95,
  minLabelsPerBand: 10,
  overdueAfterHours: 48,
} as const;

/** `decide what-if`: the items it re-scores unless told otherwise. */
export const WHAT_IF = { sample: 500, windowDays: 30 } as const;
