/**
 * Builds the chat messages of the direct-options method (docs/architecture.md): a short system
 * instruction and a user message that is a JSON object of evidence, criterion and lettered
 * options. Pure: no model is needed to build or test a prompt.
 */
import { createHash } from "node:crypto";
import type {
  DecisionQuestion,
  PromptLayout,
  ScoringMode,
} from "../../shared/domain/contracts/system-one/index.ts";

/** Option letters, in order: at most 16 options. */
export const OPTION_LETTERS = "ABCDEFGHIJKLMNOP".split("");

/** Version of each prompt layout; change it whenever the rendered text changes. */
export const PROMPT_VERSIONS: Record<ScoringMode, Record<PromptLayout, string>> = {
  letters: {
    "state-first": "direct-options/state-first@2",
    "policy-first": "direct-options/policy-first@1",
  },
  likelihood: {
    "state-first": "option-likelihood/state-first@2",
    "policy-first": "option-likelihood/policy-first@1",
  },
};

/** The system instruction of letter scoring. */
export const LETTER_INSTRUCTION =
  "You make bounded decisions. The user message is a JSON object with the evidence, the criterion and " +
  "the options, each under a letter. Answer with the single letter of the option that best fits the " +
  "criterion, and nothing else.";

/** The system instruction of likelihood scoring. */
export const LIKELIHOOD_INSTRUCTION =
  "You make bounded decisions. The user message is a JSON object with the evidence, the criterion and " +
  "the options. Answer with the text of the option that best fits the criterion, exactly as written.";

/** The messages of one question, ready for the model's chat template. */
export interface DecisionPrompt {
  readonly system: string;
  readonly user: string;
  /** Letters of the options, in option order (letters mode); empty in likelihood mode. */
  readonly letters: readonly string[];
  readonly promptVersion: string;
  /** SHA-256 of the version and both messages: identical for identical prompts on any model. */
  readonly promptSha256: string;
  /**
   * Characters at the start of `user` before its last key (`,"criterion":` state-first,
   * `,"evidence":` policy-first): what prompts that differ only in that key share, and where
   * `prompt-tokens.ts` may cut the text to keep the tokens of the part before.
   */
  readonly sharedHead: number;
}

/**
 * Builds the prompt for one question about `state`.
 *
 * @example
 * buildDecisionPrompt("My card was charged twice", question, "state-first", "letters").user
 * // '{"evidence":"My card was charged twice","criterion":"Which team?","options":{"A":"Billing",...}}'
 */
export function buildDecisionPrompt(
  state: unknown,
  question: Pick<DecisionQuestion, "instructions" | "options">,
  layout: PromptLayout,
  scoring: ScoringMode,
): DecisionPrompt {
  const letters = scoring === "letters" ? OPTION_LETTERS.slice(0, question.options.length) : [];
  const options =
    scoring === "letters"
      ? Object.fromEntries(question.options.map((option, i) => [letters[i], option.description]))
      : question.options.map((option) => option.description);
  // The evidence goes in as a JSON value (a string stays a string), so JSON.stringify escapes it.
  const evidence = state;
  // Key order is the layout: the shared part of consecutive prompts must come first to be reused.
  // State-first puts the criterion last, after the options: questions that share their options
  // (every yes/no question) then share everything but the criterion, and the criterion sits
  // right before the answer position.
  const body =
    layout === "state-first"
      ? { evidence, options, criterion: question.instructions }
      : { criterion: question.instructions, options, evidence };
  const system = scoring === "letters" ? LETTER_INSTRUCTION : LIKELIHOOD_INSTRUCTION;
  const user = JSON.stringify(body);
  const [lastKey, lastValue] = Object.entries(body).at(-1)!;
  const sharedHead = Math.max(
    0,
    user.length - `,${JSON.stringify(lastKey)}:${JSON.stringify(lastValue)}}`.length,
  );
  const promptVersion = PROMPT_VERSIONS[scoring][layout];
  const promptSha256 = createHash("sha256").update(`${promptVersion}\n${system}\n${user}`).digest("hex");
  return { system, user, letters, promptVersion, promptSha256, sharedHead };
}
