/**
 * The SemIf / Jev "system one" API: request validation and translation to the scorer, and the
 * answer shapes (choice, score, noul) with floats that always carry a decimal point.
 *
 * Request: `{"state", "model"?, "questions": {"<key>": {"type", "instructions", "criteria"}}}`.
 * choice criteria: `{id: description | null}` in insertion order, 2 to 16 entries;
 * score criteria: levels from low to high, 2 to 16; noul criteria: optional `{"true", "false"}`.
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import {
  float,
  type JsonFloat,
  ordered,
  orderedKeys,
  ownValue,
  type Wire,
} from "../../shared/domain/contracts/json.ts";
import {
  type AnswerDetail,
  type DecisionResult,
  MAX_OPTIONS,
  MIN_OPTIONS,
  NOUL_OPTIONS,
  OPTION_ORDERS,
  PROMPT_LAYOUTS,
  QUESTION_TYPES,
  type QuestionResult,
  type SystemOneAnswer,
  type SystemOneResponse,
} from "../../shared/domain/contracts/system-one/index.ts";
import type { InvalidDecisionError } from "../runtime/errors.ts";
import type { DecisionQuestionInput, DecisionRequestInput } from "../scorer/request.ts";
import { invalidField } from "./api-error.ts";

const content = z.union([
  z.string().trim().min(1, "must not be empty"),
  z.record(z.string(), z.unknown()),
  z.array(z.unknown()),
]);

/** A JSON object (not an array or null); its entries are read in document order, never through zod's records. */
const jsonObject = z.custom<Record<string, unknown>>(
  (value) => typeof value === "object" && value !== null && !Array.isArray(value),
  { message: "must be an object" },
);

const choiceQuestion = z
  .object({
    type: z.literal("choice"),
    instructions: content,
    criteria: jsonObject,
    temperature: z.number().positive().max(100).optional(),
    /** Extension: "cyclic" averages over the rotations of the options (option-order debiasing). */
    option_order: z.enum(OPTION_ORDERS).optional(),
  })
  .strict();
const scoreQuestion = z
  .object({
    type: z.literal("score"),
    instructions: content,
    criteria: z.array(z.string().trim().min(1, "levels must not be empty")),
    temperature: z.number().positive().max(100).optional(),
    /** Extension: "cyclic" averages over the rotations of the options (option-order debiasing). */
    option_order: z.enum(OPTION_ORDERS).optional(),
  })
  .strict();
const noulQuestion = z
  .object({
    type: z.literal("noul"),
    instructions: content,
    criteria: z
      .object({ true: z.string().min(1), false: z.string().min(1) })
      .partial()
      .strict()
      .optional(),
    temperature: z.number().positive().max(100).optional(),
    /** Extension: "cyclic" averages over the rotations of the options (option-order debiasing). */
    option_order: z.enum(OPTION_ORDERS).optional(),
  })
  .strict();
const questionSchemas = { choice: choiceQuestion, score: scoreQuestion, noul: noulQuestion } as const;

const envelope = z
  .object({
    state: z.unknown(),
    model: z.string().optional(),
    questions: jsonObject,
    /** Extensions of this runtime (ignored by other System One servers). */
    layout: z.enum(PROMPT_LAYOUTS).optional(),
    token_mass: z.boolean().optional(),
  })
  .strict();

/** A validated System One request, translated for the scorer. */
export interface SystemOneCall {
  readonly model: string | undefined;
  readonly decision: DecisionRequestInput;
  /** Question keys in request order. */
  readonly keys: readonly string[];
  /** Legend per score question (level index to text). */
  readonly legends: ReadonlyMap<string, readonly string[]>;
}

/** Whether a parsed body looks like a System One request (as opposed to a chat request). */
export function isSystemOneBody(body: unknown): boolean {
  return typeof body === "object" && body !== null && "questions" in body;
}

function issueOf(error: z.ZodError, prefix: string): never {
  const issue = error.issues[0]!;
  const param = [prefix, ...issue.path.map(String)].filter(Boolean).join(".");
  throw invalidField(param || undefined, `${param || "request"}: ${issue.message}`);
}

/** Validates a System One body; throws a 422 {@link ApiError} naming the parameter. */
export function parseSystemOne(body: unknown, defaults: { tokenMass: boolean }): SystemOneCall {
  if (typeof body !== "object" || body === null || Array.isArray(body)) {
    throw invalidField(undefined, "the body must be a JSON object");
  }
  const parsed = envelope.safeParse(body);
  if (!parsed.success) issueOf(parsed.error, "");
  const { questions, state } = parsed.data;
  // Keys in the order the client wrote them, every one kept (`__proto__`, integer-like ids).
  const keys = orderedKeys(body, ["questions"]);
  if (keys.length === 0) throw invalidField("questions", "questions: must hold at least one question");
  if (keys.length > 64)
    throw invalidField("questions", `questions: at most 64 questions, got ${keys.length}`);
  const legends = new Map<string, readonly string[]>();
  const translated: DecisionQuestionInput[] = keys.map((key) => {
    const raw = ownValue(questions, key);
    const param = `questions.${key}`;
    const type = (raw as { type?: unknown } | null)?.type;
    if (typeof type !== "string" || !(QUESTION_TYPES as readonly string[]).includes(type)) {
      throw invalidField(
        `${param}.type`,
        `${param}.type: must be one of ${QUESTION_TYPES.join(", ")}, got ${JSON.stringify(type ?? null)}`,
      );
    }
    const schema = questionSchemas[type as keyof typeof questionSchemas];
    const question = schema.safeParse(raw);
    if (!question.success) issueOf(question.error, param);
    const q = question.data;
    const instructions = typeof q.instructions === "string" ? q.instructions : JSON.stringify(q.instructions);
    const temperature = {
      ...(q.temperature === undefined ? {} : { temperature: q.temperature }),
      ...(q.option_order === undefined ? {} : { optionOrder: q.option_order }),
    };
    if (q.type === "choice") {
      const options = choiceOptions(body, key, q.criteria, `${param}.criteria`);
      return { key, type: "choice", instructions, options, ...temperature };
    }
    if (q.type === "score") {
      checkCount(q.criteria.length, `${param}.criteria`, "levels");
      const seen = new Set<string>();
      for (const [i, level] of q.criteria.entries()) {
        if (seen.has(level))
          throw invalidField(`${param}.criteria.${i}`, `${param}.criteria: duplicate level "${level}"`);
        seen.add(level);
      }
      legends.set(key, q.criteria);
      return {
        key,
        type: "score",
        instructions,
        options: q.criteria.map((description, level) => ({ id: String(level), description })),
        ...temperature,
      };
    }
    const wording = q.criteria
      ? {
          options: [
            { id: "true", description: q.criteria.true ?? NOUL_OPTIONS[0]!.description },
            { id: "false", description: q.criteria.false ?? NOUL_OPTIONS[1]!.description },
          ],
        }
      : {};
    return { key, type: "noul", instructions, ...wording, ...temperature };
  });
  return {
    model: parsed.data.model,
    keys,
    legends,
    decision: {
      state,
      questions: translated,
      ...(parsed.data.layout ? { layout: parsed.data.layout } : {}),
      tokenMass: parsed.data.token_mass ?? defaults.tokenMass,
    },
  };
}

/**
 * The options of a choice question from its criteria map, in document order: ids trimmed, then
 * checked for emptiness and duplicates (naming both spellings), descriptions strings or null.
 */
function choiceOptions(
  body: unknown,
  key: string,
  criteria: Record<string, unknown>,
  param: string,
): { id: string; description: string }[] {
  const ids = orderedKeys(body, ["questions", key, "criteria"]);
  checkCount(ids.length, param, "options");
  const seen = new Map<string, string>();
  return ids.map((raw) => {
    const id = raw.trim();
    if (!id) throw invalidField(param, `${param}: option ids must not be empty`);
    const earlier = seen.get(id);
    if (earlier !== undefined) {
      throw invalidField(
        `${param}.${raw}`,
        `${param}: option ids ${JSON.stringify(earlier)} and ${JSON.stringify(raw)} are the same after trimming`,
      );
    }
    seen.set(id, raw);
    const description = ownValue(criteria, raw);
    if (description !== null && typeof description !== "string") {
      throw invalidField(`${param}.${raw}`, `${param}.${raw}: must be a string or null`);
    }
    return { id, description: description?.trim() || id };
  });
}

function checkCount(count: number, param: string, what: string): void {
  if (count < MIN_OPTIONS || count > MAX_OPTIONS) {
    throw invalidField(param, `${param}: must hold ${MIN_OPTIONS} to ${MAX_OPTIONS} ${what}, got ${count}`);
  }
}

/** Renames a scorer field (`questions[2].options`) to the System One parameter (`questions.<key>.criteria`). */
export function systemOneParam(error: InvalidDecisionError, keys: readonly string[]): string {
  const match = /^questions\[(\d+)\](.*)$/.exec(error.field);
  if (!match) return error.field;
  const key = keys[Number(match[1])] ?? match[1];
  return `questions.${key}${match[2]!.replace(/^\.options/, ".criteria").replace(/^\.optionOrder/, ".option_order")}`;
}

type FloatMap = Record<string, JsonFloat>;

/** Values in option order, keyed by option id (the contract never aligns values by position). */
function byOption(ids: readonly string[], values: readonly number[]): FloatMap {
  return ordered(ids.map((id, i) => [id, float(values[i]!)] as const));
}

/** The System One answer to one question, with this runtime's detail under `x_detail`. */
function answerOf(result: QuestionResult, legend: readonly string[] | undefined): Wire<SystemOneAnswer> {
  const probabilities = byOption(result.optionIds, result.probabilities);
  const detail: Wire<AnswerDetail> = {
    logits: byOption(result.optionIds, result.logits),
    raw_probabilities: byOption(result.optionIds, result.rawProbabilities),
    temperature: float(result.temperature),
    allowed_token_mass: result.allowedTokenMass === null ? null : float(result.allowedTokenMass),
    prompt_sha256: result.promptSha256,
    prompt_version: result.promptVersion,
    option_order: result.optionOrder,
    passes: result.passes,
    input_tokens: result.inputTokens,
    reused_tokens: result.reusedTokens,
    timings_ms: {
      render: float(result.timings.renderMs),
      evaluate: float(result.timings.evaluateMs),
      total: float(result.timings.totalMs),
    },
  };
  switch (result.type) {
    case "choice":
      return {
        type: "choice",
        choice: result.chosen,
        probabilities,
        confidence: float(result.confidence),
        x_detail: detail,
      };
    case "score":
      return {
        type: "score",
        score: float(result.score!),
        legend: Object.fromEntries((legend ?? result.optionIds).map((text, i) => [String(i), text])),
        probabilities,
        confidence: float(result.confidence),
        x_detail: detail,
      };
    case "noul":
      return { type: "noul", noul: float(result.noul!), x_detail: detail };
  }
}

/** The System One response for a scored call. */
export function systemOneResponse(
  call: SystemOneCall,
  result: DecisionResult,
  modelName: string,
): Wire<SystemOneResponse> {
  return {
    id: `so-${randomUUID()}`,
    model: modelName,
    answers: ordered(
      result.answers.map((answer) => [answer.key, answerOf(answer, call.legends.get(answer.key))] as const),
    ),
    usage: { input_tokens: result.usage.inputTokens, output_tokens: 0 },
    x_detail: {
      model_sha256: result.modelSha256,
      evaluated_tokens: result.usage.evaluatedTokens,
      total_ms: float(result.totalMs),
    },
  };
}
