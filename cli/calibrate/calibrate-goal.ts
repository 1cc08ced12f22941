/**
 * The threshold goal of `decide calibrate`: a certified rate of wrong automatic actions
 * (`--max-auto-error 0.02 [--confidence 0.95]`), a target accuracy (default 0.97), or two costs.
 */

import { CALIBRATION_RANGES } from "../../shared/domain/calibration/ranges.ts";
import type { ThresholdGoal } from "../../shared/domain/calibration/threshold.ts";
import { UsageError } from "../args.ts";

const DEFAULT_CONFIDENCE = 0.95;

/** The goal from the command's flags; a bad number or a lone cost is a usage error. */
export function goalOf(values: Record<string, string | boolean | undefined>): ThresholdGoal {
  const number = (name: string) => {
    const raw = values[name];
    if (raw === undefined) return undefined;
    const n = Number(raw);
    if (!Number.isFinite(n) || n < 0)
      throw new UsageError(`--${name} must be a non-negative number, got "${String(raw)}"`);
    return n;
  };
  const within = (name: string, n: number, range: { readonly min: number; readonly max: number }) => {
    if (n < range.min || n > range.max)
      throw new UsageError(`--${name} must be from ${range.min} to ${range.max}, got ${n}`);
    return n;
  };
  // One goal sets the threshold: a second one given beside it would be silently ignored.
  const goals = [["max-auto-error"], ["target-accuracy"], ["cost-wrong", "cost-review"]].filter((flags) =>
    flags.some((flag) => values[flag] !== undefined),
  );
  if (goals.length > 1)
    throw new UsageError(
      `give one threshold goal: ${goals.map((flags) => flags.map((f) => `--${f}`).join("/")).join(" or ")}, not both`,
    );
  const maxError = number("max-auto-error");
  const confidence = number("confidence");
  if (maxError !== undefined)
    return {
      kind: "max-auto-error",
      maxError: within("max-auto-error", maxError, CALIBRATION_RANGES.certificateMaxError),
      confidence: within(
        "confidence",
        confidence ?? DEFAULT_CONFIDENCE,
        CALIBRATION_RANGES.certificateConfidence,
      ),
    };
  if (confidence !== undefined) throw new UsageError("--confidence goes with --max-auto-error");
  const wrong = number("cost-wrong");
  const review = number("cost-review");
  if (wrong !== undefined || review !== undefined) {
    if (wrong === undefined || review === undefined)
      throw new UsageError("--cost-wrong and --cost-review go together");
    return { kind: "cost", wrongAutomatic: wrong, humanReview: review };
  }
  const target = number("target-accuracy") ?? 0.97;
  if (target <= 0 || target >= 1)
    throw new UsageError(`--target-accuracy must be between 0 and 1, got ${target}`);
  return { kind: "target-accuracy", accuracy: target };
}
