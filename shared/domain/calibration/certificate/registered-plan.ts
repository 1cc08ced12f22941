/**
 * A registered plan: what a certificate will test, written down with its certification sample
 * before anyone labels it (`decide calibrate --plan --request N`), so that the certificate tests
 * exactly that and nothing chosen after seeing labels. It names the goal, the ordered thresholds
 * of a fixed sequence (the grid's points from the strictest down to the sample's frame minimum),
 * the sample's size, the policy version and the level it is tested at. Repeated plans on one
 * version are repeated tests of one claim, so the error budget α = 1 − confidence is split among
 * them: the first plan is tested at 80% of α, each later one at half of what is left (10%, 5%, …
 * of α), so the whole family never exceeds α. The plan rides on every drawn record, inside its
 * frame; {@link certificationDrawSchema} validates what is read back.
 */
import { z } from "zod";
import { CERTIFICATE_GRID, type CertificateGoal, zeroErrorLabels } from "./certificate.ts";

/** The plan a certification sample was drawn for. */
export interface RegisteredPlan extends CertificateGoal {
  /** The thresholds it tests, strictest first, ending at the frame's minimum (the planned threshold). */
  readonly thresholds: readonly number[];
  /** Decisions drawn. */
  readonly size: number;
  readonly policyVersion: number;
  /** Which plan of the version this is: 1 for the first. */
  readonly round: number;
  /** The confidence it is tested at: 1 − its share of α (0.96 for the first plan at 95%). */
  readonly level: number;
  /**
   * How the sampled version decided when the sample was drawn (its text, and every model's map,
   * threshold and floor, hashed): a certificate is recomputed under that version's file only while
   * the file still says this. Absent on plans drawn before it was written.
   */
  readonly rulesSha256?: string | undefined;
}

/** Share of α = 1 − confidence the `round`-th plan of a version is tested at: 0.8, 0.1, 0.05, … */
export function alphaShare(round: number): number {
  return round <= 1 ? 0.8 : 0.2 / 2 ** (round - 1);
}

/** The confidence the `round`-th plan of a version is tested at (0.96 for the first at 95%). */
export function registeredLevel(confidence: number, round: number): number {
  return Number((1 - alphaShare(round) * (1 - confidence)).toFixed(12));
}

/**
 * The plan's fixed sequence: the grid's points above `minProbability`, strictest first, then
 * `minProbability` itself, which ends it (so the frame's minimum, the policy's own threshold or the
 * one planned, is tested as it is, never the grid point just below it). The label plan reads its
 * counts at these same thresholds.
 */
export function planThresholds(minProbability: number): number[] {
  const above = CERTIFICATE_GRID.filter((t) => t > minProbability);
  return [...above, minProbability];
}

/** The plan of a sample of `size` drawn from the frame at `minProbability`, the version's `round`-th. */
export function registerPlan(
  goal: CertificateGoal,
  minProbability: number,
  size: number,
  policyVersion: number,
  round: number,
  rulesSha256?: string,
): RegisteredPlan {
  return {
    maxError: goal.maxError,
    confidence: goal.confidence,
    thresholds: planThresholds(minProbability),
    size,
    policyVersion,
    round,
    level: registeredLevel(goal.confidence, round),
    ...(rulesSha256 ? { rulesSha256 } : {}),
  };
}

/** Fewest drawn labels, all right, that pass the plan's level (160 for 2% at 95%, first plan). */
export function registeredZeroErrors(goal: CertificateGoal, round: number): number {
  return zeroErrorLabels({ maxError: goal.maxError, confidence: registeredLevel(goal.confidence, round) });
}

const probability = z.number().min(0).max(1);

/** A registered plan as a record stores it. */
const registeredPlanSchema = z
  .object({
    maxError: z.number().gt(0).lt(1),
    confidence: z.number().gt(0).lt(1),
    thresholds: z.array(probability).min(1),
    size: z.number().int().min(0),
    policyVersion: z.number().int().min(1),
    round: z.number().int().min(1),
    level: z.number().gt(0).lt(1),
    rulesSha256: z
      .string()
      .regex(/^[0-9a-f]{64}$/)
      .optional(),
  })
  .strict();

/** The certification field of a decision record: the frame (with its plan, when registered), band and chance. */
export const certificationDrawSchema = z
  .object({
    sample: z.string().min(1),
    drawnAt: z.iso.datetime({ offset: true }),
    minProbability: probability,
    edges: z.array(probability),
    rates: z.array(probability),
    plan: registeredPlanSchema.optional(),
    band: z.number().int().min(0),
    inclusionProbability: probability,
  })
  .strict();
