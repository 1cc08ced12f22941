/**
 * The scorer's input: a state and questions with declared options, validated strictly.
 * Every rejection names the field it is about.
 */
import { z } from "zod";
import {
  MAX_OPTIONS,
  MIN_OPTIONS,
  NOUL_OPTIONS,
  OPTION_ORDERS,
  type OptionOrder,
  PROMPT_LAYOUTS,
  type PromptLayout,
  QUESTION_TYPES,
  type QuestionType,
  SCORING_MODES,
  type ScoringMode,
} from "../../shared/domain/contracts/system-one/index.ts";
import { InvalidDecisionError } from "../runtime/errors.ts";

const optionSchema = z.object({
  id: z.string().trim().min(1, "must not be empty").max(128, "must be at most 128 characters"),
  description: z.string().trim().min(1, "must not be empty").max(4000, "must be at most 4000 characters"),
});

const questionSchema = z
  .object({
    key: z.string().trim().min(1, "must not be empty").max(128),
    type: z.enum(QUESTION_TYPES, { error: () => `must be one of ${QUESTION_TYPES.join(", ")}` }),
    instructions: z.string().trim().min(1, "must not be empty"),
    options: z.array(optionSchema).optional(),
    temperature: z.number().positive("must be above 0").max(100, "must be at most 100").default(1),
    scoring: z
      .enum(SCORING_MODES, { error: () => `must be one of ${SCORING_MODES.join(", ")}` })
      .default("letters"),
    optionOrder: z
      .enum(OPTION_ORDERS, { error: () => `must be one of ${OPTION_ORDERS.join(", ")}` })
      .default("declared"),
  })
  .strict();

const requestSchema = z
  .object({
    state: z.unknown(),
    questions: z
      .array(questionSchema)
      .min(1, "must hold at least one question")
      .max(64, "at most 64 questions"),
    layout: z.enum(PROMPT_LAYOUTS).default("state-first"),
    tokenMass: z.boolean().default(true),
  })
  .strict();

/** A validated option. */
export type DecisionOption = z.infer<typeof optionSchema>;
/** A validated question, with defaults applied and options resolved for every type. */
export type DecisionQuestion = Omit<z.infer<typeof questionSchema>, "options"> & {
  readonly options: readonly DecisionOption[];
};
/** A validated decision request. */
export interface DecisionRequest {
  readonly state: unknown;
  readonly questions: readonly DecisionQuestion[];
  readonly layout: PromptLayout;
  /** Also read how much of the full-vocabulary mass the option letters hold (costs a full readout). */
  readonly tokenMass: boolean;
}
/** A question as callers write it, before validation and defaults. */
export interface DecisionQuestionInput {
  readonly key: string;
  readonly type: QuestionType;
  readonly instructions: string;
  readonly options?: readonly { readonly id: string; readonly description: string }[];
  /** @default 1 */
  readonly temperature?: number;
  /** @default "letters" */
  readonly scoring?: ScoringMode;
  /** `cyclic` averages over the rotations of the options (see option-order.ts). @default "declared" */
  readonly optionOrder?: OptionOrder;
}

/** A decision request as callers write it; {@link parseDecisionRequest} checks it all the same. */
export interface DecisionRequestInput {
  readonly state: unknown;
  readonly questions: readonly DecisionQuestionInput[];
  /** @default "state-first" */
  readonly layout?: PromptLayout;
  /** @default true */
  readonly tokenMass?: boolean;
}

/** Validates and normalizes a decision request, or throws {@link InvalidDecisionError}. */
export function parseDecisionRequest(input: unknown): DecisionRequest {
  const parsed = requestSchema.safeParse(input);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new InvalidDecisionError(formatPath(issue.path), issue.message);
  }
  validateState(parsed.data.state, "state");
  const keys = new Set<string>();
  const questions = parsed.data.questions.map((question, index) => {
    const field = `questions[${index}]`;
    if (keys.has(question.key))
      throw new InvalidDecisionError(`${field}.key`, `duplicate question key "${question.key}"`);
    keys.add(question.key);
    if (question.optionOrder === "cyclic" && question.type === "score") {
      throw new InvalidDecisionError(
        `${field}.optionOrder`,
        "cyclic applies to choice and noul questions; a score question's levels are ordered, and rotating them would mix up low and high",
      );
    }
    return { ...question, options: resolveOptions(question, field) };
  });
  return { ...parsed.data, questions };
}

function resolveOptions(question: z.infer<typeof questionSchema>, field: string): readonly DecisionOption[] {
  if (question.type === "noul") {
    if (question.options === undefined) return NOUL_OPTIONS;
    // Custom wording of what true and false mean; true always comes first so noul = p(first).
    const ids = question.options.map((option) => option.id).sort();
    if (ids.length !== 2 || ids[0] !== "false" || ids[1] !== "true") {
      throw new InvalidDecisionError(
        `${field}.options`,
        'a noul question takes no options, or exactly the two options "true" and "false"',
      );
    }
    return [...question.options].sort((a, b) => (a.id === "true" ? -1 : b.id === "true" ? 1 : 0));
  }
  const options = question.options;
  if (options === undefined)
    throw new InvalidDecisionError(`${field}.options`, `a ${question.type} question needs options`);
  if (options.length < MIN_OPTIONS || options.length > MAX_OPTIONS) {
    throw new InvalidDecisionError(
      `${field}.options`,
      `must hold ${MIN_OPTIONS} to ${MAX_OPTIONS} options, got ${options.length}`,
    );
  }
  const ids = new Set<string>();
  for (const [i, option] of options.entries()) {
    if (ids.has(option.id))
      throw new InvalidDecisionError(`${field}.options[${i}].id`, `duplicate option id "${option.id}"`);
    ids.add(option.id);
  }
  return options;
}

/** The state must be a non-empty string, object or array, with finite numbers only. */
function validateState(state: unknown, field: string): void {
  if (typeof state === "string") {
    if (state.trim().length === 0) throw new InvalidDecisionError(field, "must not be empty");
    return;
  }
  if (state === null || typeof state !== "object") {
    throw new InvalidDecisionError(field, "must be a string, an object or an array");
  }
  const entries = Array.isArray(state) ? state.length : Object.keys(state).length;
  if (entries === 0) throw new InvalidDecisionError(field, "must not be empty");
  assertFinite(state, field);
}

function assertFinite(value: unknown, field: string): void {
  if (typeof value === "number" && !Number.isFinite(value)) {
    throw new InvalidDecisionError(field, `holds a non-finite number (${value})`);
  }
  if (typeof value === "bigint" || typeof value === "function" || typeof value === "symbol") {
    throw new InvalidDecisionError(field, `holds a ${typeof value}, which JSON cannot carry`);
  }
  if (Array.isArray(value)) {
    for (const [i, item] of value.entries()) assertFinite(item, `${field}[${i}]`);
  } else if (value !== null && typeof value === "object") {
    for (const [key, item] of Object.entries(value)) assertFinite(item, `${field}.${key}`);
  }
}

function formatPath(path: readonly PropertyKey[]): string {
  if (path.length === 0) return "request";
  return path.reduce<string>(
    (out, part) =>
      typeof part === "number" ? `${out}[${part}]` : out ? `${out}.${String(part)}` : String(part),
    "",
  );
}
