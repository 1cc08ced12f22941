/**
 * The System One request the pipeline sends for one item under one policy, and the option ids
 * its answer is keyed by. The request's type follows the schema the endpoint validates it with.
 */
import type { Item } from "../../item.ts";
import type { DecisionOption, SystemOneQuestion, SystemOneRequest } from "./request.ts";
import {
  DECISION_QUESTION_KEY,
  type OptionOrder,
  type PromptLayout,
  type QuestionType,
} from "./vocabulary.ts";

/** A question with its options declared as a list, as a policy (or a test) holds it. */
export interface DeclaredQuestion {
  readonly type: QuestionType;
  readonly instructions: string;
  /** choice: in order; score: levels low to high (ids unused); noul: `true` and `false`, or none for "Yes" / "No". */
  readonly options?: readonly DecisionOption[];
  /** @default "declared" */
  readonly optionOrder?: OptionOrder | undefined;
}

/** The System One question for declared options: the options become the criteria of its type. */
export function systemOneQuestion(declared: DeclaredQuestion): SystemOneQuestion {
  const options = declared.options ?? [];
  const shared = {
    instructions: declared.instructions,
    ...(declared.optionOrder === "cyclic" ? { option_order: "cyclic" as const } : {}),
  };
  const description = (id: string) => options.find((o) => o.id === id)?.description;
  switch (declared.type) {
    case "score":
      return { type: "score", criteria: options.map((o) => o.description), ...shared };
    case "noul":
      return declared.options
        ? { type: "noul", criteria: { true: description("true"), false: description("false") }, ...shared }
        : { type: "noul", ...shared };
    case "choice":
      return {
        type: "choice",
        criteria: Object.fromEntries(options.map((o) => [o.id, o.description])),
        ...shared,
      };
  }
}

/** What the request takes from a policy (a `Policy` is one; named here so the contract imports no policy). */
export interface PolicyQuestion {
  readonly type: QuestionType;
  readonly question: string;
  readonly options: readonly DecisionOption[];
  readonly optionOrder?: OptionOrder | undefined;
  readonly layout: PromptLayout;
  /** The model to ask, by the name the endpoint serves it under; unset asks the endpoint's own. */
  readonly model?: string | undefined;
  /** Whether to ask for the allowed-token mass. @default true */
  readonly tokenMass?: boolean | undefined;
}

/** The System One request for one item under one policy. */
export function systemOneRequest(item: Item, policy: PolicyQuestion): SystemOneRequest {
  return {
    ...(policy.model ? { model: policy.model } : {}),
    state: item.state,
    questions: {
      [DECISION_QUESTION_KEY]: systemOneQuestion({ ...policy, instructions: policy.question }),
    },
    // Rotations share the evidence only when it comes first: state-first re-evaluates just the
    // options and the criterion per rotation, policy-first would re-read the whole item n times.
    layout: policy.optionOrder === "cyclic" ? "state-first" : policy.layout,
    token_mass: policy.tokenMass ?? true,
  };
}

/** The ids the answer's logits are keyed by, in the policy's option order. */
export function answerIdsOf(policy: Pick<PolicyQuestion, "type" | "options">): string[] {
  // Score levels are keyed by their index; choice and noul options by their ids.
  return policy.options.map((option, i) => (policy.type === "score" ? String(i) : option.id));
}
