/**
 * The System One request the pipeline sends for one item under one policy, and the option ids
 * its answer is keyed by.
 */
import type { Item } from "../../item.ts";
import type { Policy } from "../../policy/policy.ts";
import { DECISION_QUESTION_KEY } from "./vocabulary.ts";

/** A System One question as the pipeline sends it. */
export interface SystemOneQuestion {
  readonly type: "choice" | "score" | "noul";
  readonly instructions: string;
  /** choice: `{id: description}` in option order; score: level texts low to high; noul: `{true, false}`. */
  readonly criteria: Record<string, string> | readonly string[];
  /** Extension: average over the options' rotations. */
  readonly option_order?: "declared" | "cyclic";
}

/** A System One request as the pipeline sends it (with this runtime's extensions). */
export interface SystemOneRequest {
  readonly state: unknown;
  readonly questions: Record<string, SystemOneQuestion>;
  readonly layout?: "state-first" | "policy-first";
  readonly token_mass?: boolean;
}

/** The System One request for one item under one policy. */
export function systemOneRequest(item: Item, policy: Policy): SystemOneRequest {
  const criteria =
    policy.type === "score"
      ? policy.options.map((o) => o.description)
      : Object.fromEntries(policy.options.map((o) => [o.id, o.description]));
  const cyclic = policy.optionOrder === "cyclic";
  const question = { type: policy.type, instructions: policy.question, criteria };
  return {
    state: item.state,
    questions: { [DECISION_QUESTION_KEY]: cyclic ? { ...question, option_order: "cyclic" } : question },
    // Rotations share the evidence only when it comes first: state-first re-evaluates just the
    // options and the criterion per rotation, policy-first would re-read the whole item n times.
    layout: cyclic ? "state-first" : policy.layout,
    token_mass: true,
  };
}

/** The ids the answer's logits are keyed by, in the policy's option order. */
export function answerIdsOf(policy: Policy): string[] {
  // Score levels are keyed by their index; choice and noul options by their ids.
  return policy.options.map((option, i) => (policy.type === "score" ? String(i) : option.id));
}
