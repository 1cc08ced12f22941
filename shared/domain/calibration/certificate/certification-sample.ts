/**
 * A certification sample: decisions of one policy version drawn at random for a person's label so
 * that a certificate can rest on them (`decide calibrate --plan --request N`). The frame is every
 * decision of the version made up to the draw whose top option may be automated and whose
 * calibrated top probability is at least `minProbability` (automated ones included: reviewing
 * them never undoes their action). The draw is spread over the frame's confidence
 * (`certification-draw.ts`); the chance of each band of the frame (one band when the draw is
 * even) is stored with every drawn record, together with the frame itself, so that any labelled
 * decision's chance of having been drawn can be computed later (`label-selection.ts`).
 */
import type { RegisteredPlan } from "./registered-plan.ts";

/** What a draw covered and at what rate: stored on every record it drew. */
export interface CertificationFrame {
  /** The sample's id. */
  readonly sample: string;
  /** Decisions of the version made at or before this time (ISO). */
  readonly drawnAt: string;
  /** Calibrated top probability at or above which a decision was in the frame. */
  readonly minProbability: number;
  /** Band edges above `minProbability`, ascending: bands [min, e₀), [e₀, e₁), …, [eₖ, 1]. */
  readonly edges: readonly number[];
  /** Each band's chance of being drawn: drawn ÷ decisions in it. */
  readonly rates: readonly number[];
  /** What its certificate will test, written with the sample (`registered-plan.ts`); absent on older samples. */
  readonly plan?: RegisteredPlan;
}

/** What a drawn record carries: the frame, its band and its chance. */
export interface CertificationDraw extends CertificationFrame {
  readonly band: number;
  readonly inclusionProbability: number;
}

/** The band of a top probability within a frame's edges. */
export function bandIndex(edges: readonly number[], topProbability: number): number {
  return edges.filter((edge) => topProbability >= edge).length;
}

/** A decision as the frame sees it. */
export interface FrameMember {
  readonly itemId: string;
  readonly createdAt: string;
  readonly topProbability: number;
  /** Its top option may be automated (automatable, not out of scope). */
  readonly automatable: boolean;
}

/** The chance `member` had of being drawn by `frame` (0 when outside it). */
export function frameRate(frame: CertificationFrame, member: FrameMember): number {
  if (!member.automatable || member.createdAt > frame.drawnAt || member.topProbability < frame.minProbability)
    return 0;
  return frame.rates[bandIndex(frame.edges, member.topProbability)] ?? 0;
}
