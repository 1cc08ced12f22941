/** The threshold goal of `decide calibrate`: a target accuracy (default 0.97) or two costs. */
import type { ThresholdGoal } from "../shared/domain/calibration/threshold.ts";
import { UsageError } from "./args.ts";

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
