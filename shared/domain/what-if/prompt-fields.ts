/**
 * Whether a candidate version asks the model the same thing as a live one: the fields that make
 * the prompt (type, question, options and their order, layout, option order). When none differs,
 * the live version's stored raw logits are the candidate's too, and a what-if of a calibration or
 * routing change needs no endpoint call.
 */
import type { Policy } from "../policy/policy.ts";

/** The first prompt field in which `candidate` differs from `live`; undefined when none does (or `live` is unknown: "version"). */
export function changedPromptField(live: Policy | undefined, candidate: Policy): string | undefined {
  if (!live) return "version";
  if (live.type !== candidate.type) return "type";
  if (live.question !== candidate.question) return "question";
  const options = (p: Policy) => JSON.stringify(p.options.map((o) => [o.id, o.description]));
  if (options(live) !== options(candidate)) return "options";
  if (live.layout !== candidate.layout) return "layout";
  if ((live.optionOrder ?? "declared") !== (candidate.optionOrder ?? "declared")) return "optionOrder";
  return undefined;
}
