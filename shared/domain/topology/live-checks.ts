/**
 * The live checks' part of the topology (`../topology.ts` re-exports it, so every number is still
 * read from the topology): the daily audit estimate and `decide what-if`.
 */

/**
 * Live audits: the days of decisions the daily estimate reads, the confidence of its interval,
 * and the labels per audit band below which the estimate warns that the band is thinly audited.
 */
export const AUDIT = { windowDays: 30, confidence: 0.95, minLabelsPerBand: 10 } as const;

/** `decide what-if`: the items it re-scores unless told otherwise. */
export const WHAT_IF = { sample: 500, windowDays: 30 } as const;
