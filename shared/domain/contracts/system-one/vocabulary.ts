/**
 * The words of the System One contract, written once: the route, question types, scoring
 * modes, prompt layouts, option orders and option limits. Imports nothing, so the policy
 * schema, the request validation, the scorer and the clients all read the same lists.
 */

/** The route of the System One API. */
export const SYSTEM_ONE_PATH = "/v1/systemone";

/** The question key the pipeline uses for its one question per item. */
export const DECISION_QUESTION_KEY = "decision";

/** Question types: pick one option, rate on ordered levels, or yes/no. */
export const QUESTION_TYPES = ["choice", "score", "noul"] as const;
/** A question type. */
export type QuestionType = (typeof QUESTION_TYPES)[number];

/** How option probabilities are read. */
export const SCORING_MODES = ["letters", "likelihood"] as const;
/** `letters`: one forward pass, option letters' logits. `likelihood`: full option text log-likelihood. */
export type ScoringMode = (typeof SCORING_MODES)[number];

/** Prompt layouts; each is versioned and the version is recorded with every answer. */
export const PROMPT_LAYOUTS = ["state-first", "policy-first"] as const;
/**
 * `state-first`: evidence, then criterion and options; several questions on one state share it.
 * `policy-first`: criterion and options, then evidence; many items under one policy share it.
 */
export type PromptLayout = (typeof PROMPT_LAYOUTS)[number];

/** How a question's options are laid out for the model. */
export const OPTION_ORDERS = ["declared", "cyclic"] as const;
/** `declared`: one pass in the order given. `cyclic`: n passes, one per rotation of the canonical order. */
export type OptionOrder = (typeof OPTION_ORDERS)[number];

/** Fewest and most options a question may declare (letters A..P). */
export const MIN_OPTIONS = 2;
export const MAX_OPTIONS = 16;

/** The options of a yes/no question: `true` first, so `noul` is the first option's probability. */
export const NOUL_OPTIONS: readonly { readonly id: string; readonly description: string }[] = [
  { id: "true", description: "Yes" },
  { id: "false", description: "No" },
];

/** Most questions one request may ask. */
export const MAX_QUESTIONS = 64;
/** Longest question key or option id. */
export const MAX_ID_LENGTH = 128;
/** Longest option description or score level. */
export const MAX_TEXT_LENGTH = 4000;
/** Highest calibration temperature a question may ask for. */
export const MAX_TEMPERATURE = 100;

/** What breaks the option rule, and where. */
export interface OptionRuleBreach {
  /** `options`: their number or set; `option`: the one at `index` repeats an earlier one; `order`: the option order. */
  readonly on: "options" | "option" | "order";
  readonly index?: number;
  readonly problem: string;
}

/**
 * The one option rule, for every request and every policy: 2 to 16 options with distinct ids
 * (score levels: distinct texts), a noul question's options exactly `true` and `false`, and the
 * cyclic order only on unordered options.
 */
export function optionRuleBreach(
  type: QuestionType,
  ids: readonly string[],
  order: OptionOrder,
): OptionRuleBreach | undefined {
  if (ids.length < MIN_OPTIONS || ids.length > MAX_OPTIONS) {
    const what = type === "score" ? "levels" : "options";
    return {
      on: "options",
      problem: `must hold ${MIN_OPTIONS} to ${MAX_OPTIONS} ${what}, got ${ids.length}`,
    };
  }
  const seen = new Set<string>();
  for (const [index, id] of ids.entries()) {
    if (seen.has(id))
      return {
        on: "option",
        index,
        problem: `duplicate ${type === "score" ? "level" : "option id"} "${id}"`,
      };
    seen.add(id);
  }
  if (type === "noul" && !(seen.has("true") && seen.has("false")))
    return { on: "options", problem: 'a noul question has exactly the options "true" and "false"' };
  if (order === "cyclic" && type === "score") {
    // Rotating ordered levels would mix up low and high: the rotations are only for unordered options.
    return {
      on: "order",
      problem:
        "cyclic applies to choice and noul questions; a score question's levels are ordered, and rotating them would mix up low and high",
    };
  }
  return undefined;
}
