/**
 * The System One request and its validation, run once where a request enters (the endpoint's
 * routes, the in-process endpoint, `decide score`). A rejection is a
 * {@link SystemOneViolationError} naming the parameter as System One names it
 * (`questions.<key>.criteria`); what passes is a {@link DecisionRequest}, the type the scorer
 * takes: defaults applied, every question's options resolved in the order the client wrote them.
 *
 * `{"state", "model"?, "questions": {"<key>": {"type", "instructions", "criteria"}}}`: choice
 * criteria `{id: description | null}`, score criteria levels from low to high, noul criteria an
 * optional `{"true", "false"}` wording. This runtime's extensions: `layout` and `token_mass` on
 * the request; `temperature`, `scoring` and `option_order` on a question.
 */
import { z } from "zod";
import { orderedKeys, ownValue } from "../json.ts";
import { checkState } from "./state.ts";
import { SystemOneViolationError } from "./violation.ts";
import {
  MAX_ID_LENGTH,
  MAX_QUESTIONS,
  MAX_TEMPERATURE,
  MAX_TEXT_LENGTH,
  NOUL_OPTIONS,
  OPTION_ORDERS,
  type OptionOrder,
  optionRuleBreach,
  PROMPT_LAYOUTS,
  QUESTION_TYPES,
  type QuestionType,
  SCORING_MODES,
} from "./vocabulary.ts";

const oneOf = <const T extends readonly [string, ...string[]]>(values: T) =>
  z.enum(values, { error: () => `must be one of ${values.join(", ")}` });

/** Option wording: trimmed, not empty, bounded. */
const wording = z
  .string()
  .trim()
  .min(1, "must not be empty")
  .max(MAX_TEXT_LENGTH, `must be at most ${MAX_TEXT_LENGTH} characters`);

/** A JSON object (not an array or null); its entries are read in document order, never through zod's records. */
const jsonObject = z.custom<Record<string, unknown>>(
  (value) => typeof value === "object" && value !== null && !Array.isArray(value),
  { message: "must be an object" },
);

/** The fields every question type has; a field added here reaches the scorer's question type. */
const questionFields = z.object({
  /** Text, or JSON content that the prompt carries as its JSON text. */
  instructions: z
    .union([
      z.string().trim().min(1, "must not be empty"),
      z.record(z.string(), z.unknown()),
      z.array(z.unknown()),
    ])
    .transform((value) => (typeof value === "string" ? value : JSON.stringify(value))),
  /** Extension: calibration temperature, `softmax(logits / T)`. */
  temperature: z.number().positive("must be above 0").max(MAX_TEMPERATURE).default(1),
  /** Extension: letters (one forward pass) or the options' full-text likelihood. */
  scoring: oneOf(SCORING_MODES).default("letters"),
  /** Extension: "cyclic" averages over the rotations of the options (option-order debiasing). */
  option_order: oneOf(OPTION_ORDERS).default("declared"),
});

const questionSchemas = {
  choice: questionFields.extend({ type: z.literal("choice"), criteria: jsonObject }).strict(),
  score: questionFields.extend({ type: z.literal("score"), criteria: z.array(wording) }).strict(),
  noul: questionFields
    .extend({
      type: z.literal("noul"),
      criteria: z.object({ true: wording, false: wording }).partial().strict().optional(),
    })
    .strict(),
} as const;

const envelope = z
  .object({
    state: z.unknown(),
    model: z.string().optional(),
    questions: jsonObject,
    /** Extension: the prompt layout. */
    layout: oneOf(PROMPT_LAYOUTS).default("state-first"),
    /** Extension: also read the option letters' share of the whole vocabulary. */
    token_mass: z.boolean().optional(),
  })
  .strict();

/**
 * The request as a document describes it (the OpenAPI page, `endpoint/openapi/openapi.ts`): the
 * validation's own schemas, with choice criteria, which the validation reads in document order
 * as a plain object, described as the map of option id to description (or null) they are.
 */
export const systemOneRequestShape = envelope.extend({
  questions: z.record(
    z.string(),
    z.discriminatedUnion("type", [
      questionSchemas.choice.extend({ criteria: z.record(z.string(), wording.nullable()) }),
      questionSchemas.score,
      questionSchemas.noul,
    ]),
  ),
});

/** One question as a client writes it. */
export type SystemOneQuestion = {
  [T in QuestionType]: z.input<(typeof questionSchemas)[T]>;
}[QuestionType];

/** A System One request as a client writes it (this runtime's extensions included). */
export type SystemOneRequest = Omit<z.input<typeof envelope>, "questions"> & {
  readonly questions: Readonly<Record<string, SystemOneQuestion>>;
};

/** A declared option: id and the text the model reads. */
export interface DecisionOption {
  readonly id: string;
  readonly description: string;
}

/** A validated question: its key, type and options, and every other field with its default. */
export type DecisionQuestion = Readonly<z.output<typeof questionFields>> & {
  readonly key: string;
  readonly type: QuestionType;
  /** choice: as declared; score: levels low to high, ids "0", "1", ...; noul: `true` first. */
  readonly options: readonly DecisionOption[];
};

declare const validated: unique symbol;

/** A request that passed {@link parseSystemOneRequest}: the only kind the scorer takes. */
export type DecisionRequest = Readonly<Omit<z.output<typeof envelope>, "questions" | "token_mass">> & {
  readonly questions: readonly DecisionQuestion[];
  readonly token_mass: boolean;
  readonly [validated]: true;
};

/** Whether a parsed body looks like a System One request (as opposed to a chat request). */
export function isSystemOneBody(body: unknown): boolean {
  return typeof body === "object" && body !== null && "questions" in body;
}

/** A request-side violation. */
function refused(
  param: string | undefined,
  problem: string,
  code?: "invalid_decision",
): SystemOneViolationError {
  return new SystemOneViolationError("request", param, problem, code);
}

/** The first issue of a failed zod parse, as a violation under `prefix`. */
function issueOf(error: z.ZodError, prefix: string): SystemOneViolationError {
  const issue = error.issues[0]!;
  const param = [prefix, ...issue.path.map(String)].filter(Boolean).join(".");
  return refused(param || undefined, issue.message);
}

/**
 * Validates a System One body (parsed by `parseJsonStrict`, so that keys keep their document
 * order) or throws {@link SystemOneViolationError}; `token_mass` defaults to `defaults.tokenMass`.
 */
export function parseSystemOneRequest(body: unknown, defaults: { tokenMass: boolean }): DecisionRequest {
  if (typeof body !== "object" || body === null || Array.isArray(body))
    throw refused(undefined, "the body must be a JSON object");
  const parsed = envelope.safeParse(body);
  if (!parsed.success) throw issueOf(parsed.error, "");
  // Keys in the order the client wrote them, every one kept (`__proto__`, integer-like ids).
  const keys = orderedKeys(body, ["questions"]);
  if (keys.length === 0) throw refused("questions", "must hold at least one question");
  if (keys.length > MAX_QUESTIONS)
    throw refused("questions", `at most ${MAX_QUESTIONS} questions, got ${keys.length}`);
  checkState(parsed.data.state, refused);
  const { questions, token_mass, ...rest } = parsed.data;
  const request = {
    ...rest,
    questions: keys.map((key) => parseQuestion(body, key, ownValue(questions, key))),
    token_mass: token_mass ?? defaults.tokenMass,
  };
  // The brand exists only in the type: this function is the one place that may set it.
  return request as unknown as DecisionRequest;
}

function parseQuestion(body: unknown, key: string, raw: unknown): DecisionQuestion {
  const param = `questions.${key}`;
  // Any key is the client's name for its answer, kept exactly as written (only bounded).
  if (key.length > MAX_ID_LENGTH)
    throw refused(param, `a question key must be at most ${MAX_ID_LENGTH} characters`);
  const type = (raw as { type?: unknown } | null)?.type;
  if (typeof type !== "string" || !(QUESTION_TYPES as readonly string[]).includes(type))
    throw refused(
      `${param}.type`,
      `must be one of ${QUESTION_TYPES.join(", ")}, got ${JSON.stringify(type ?? null)}`,
    );
  const parsed = questionSchemas[type as QuestionType].safeParse(raw);
  if (!parsed.success) throw issueOf(parsed.error, param);
  const { criteria, ...fields } = parsed.data;
  const options =
    fields.type === "choice"
      ? choiceOptions(body, param, key, fields.option_order, criteria as Record<string, unknown>)
      : fields.type === "score"
        ? scoreOptions(param, fields.option_order, criteria as string[])
        : noulOptions(criteria as { true?: string; false?: string } | undefined);
  return { key, ...fields, options };
}

/** Throws what breaks the option rule, naming the criterion `names(index)` for a repeated one. */
function checkOptionRule(
  param: string,
  type: QuestionType,
  ids: readonly string[],
  order: OptionOrder,
  repeated: (index: number) => { name: string; problem?: string },
): void {
  const breach = optionRuleBreach(type, ids, order);
  if (!breach) return;
  if (breach.on === "order") throw refused(`${param}.option_order`, breach.problem, "invalid_decision");
  if (breach.on === "options") throw refused(`${param}.criteria`, breach.problem);
  const { name, problem } = repeated(breach.index!);
  throw refused(`${param}.criteria.${name}`, problem ?? breach.problem);
}

/**
 * The options of a choice question from its criteria, in document order: ids trimmed (two that
 * trim alike are refused, naming both spellings), descriptions strings or null (then the id).
 */
function choiceOptions(
  body: unknown,
  param: string,
  key: string,
  order: OptionOrder,
  criteria: Record<string, unknown>,
): DecisionOption[] {
  const raws = orderedKeys(body, ["questions", key, "criteria"]);
  const ids = raws.map((raw) => raw.trim());
  checkOptionRule(param, "choice", ids, order, (index) => {
    const earlier = raws[ids.indexOf(ids[index]!)]!;
    const raw = raws[index]!;
    return {
      name: raw,
      problem: `option ids ${JSON.stringify(earlier)} and ${JSON.stringify(raw)} are the same after trimming`,
    };
  });
  return raws.map((raw, i) => {
    const id = ids[i]!;
    if (!id) throw refused(`${param}.criteria`, "option ids must not be empty");
    if (id.length > MAX_ID_LENGTH)
      throw refused(`${param}.criteria.${raw}`, `option ids must be at most ${MAX_ID_LENGTH} characters`);
    const description = ownValue(criteria, raw);
    if (description !== null && typeof description !== "string")
      throw refused(`${param}.criteria.${raw}`, "must be a string or null");
    const text = description?.trim() || id;
    if (text.length > MAX_TEXT_LENGTH)
      throw refused(`${param}.criteria.${raw}`, `must be at most ${MAX_TEXT_LENGTH} characters`);
    return { id, description: text };
  });
}

/** The levels of a score question, low to high, keyed by their index. */
function scoreOptions(param: string, order: OptionOrder, levels: readonly string[]): DecisionOption[] {
  checkOptionRule(param, "score", levels, order, (index) => ({ name: String(index) }));
  return levels.map((description, level) => ({ id: String(level), description }));
}

/** A yes/no question's options, `true` first, in the client's wording where given. */
function noulOptions(criteria: { true?: string; false?: string } | undefined): DecisionOption[] {
  return [
    { id: "true", description: criteria?.true ?? NOUL_OPTIONS[0]!.description },
    { id: "false", description: criteria?.false ?? NOUL_OPTIONS[1]!.description },
  ];
}
