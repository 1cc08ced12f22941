/**
 * The System One response, both ends: its shapes as zod schemas, the writer the endpoint answers
 * with ({@link systemOneResponse}: probabilities and scores always with a decimal point) and the
 * reader the pipeline parses with ({@link readDecisionAnswer}). Option values are keyed by option
 * id, never aligned by position. The `x_detail` blocks are this runtime's extension; other System
 * One servers omit them, which is why the pipeline's own reading requires them.
 */
import { randomUUID } from "node:crypto";
import { z } from "zod";
import { float, type JsonFloat, ordered, type Wire } from "../json.ts";
import type { DecisionRequest } from "./request.ts";
import type { DecisionResult, QuestionResult } from "./result.ts";
import { SystemOneViolationError } from "./violation.ts";
import { DECISION_QUESTION_KEY, type OptionOrder, type QuestionType } from "./vocabulary.ts";

const probability = z.number().min(0).max(1);
const sha256 = z.string().regex(/^[0-9a-f]{64}$/, "must be 64 lowercase hex digits");
const count = z.number().int().nonnegative();
/** Values keyed by option id: zod 4 numbers are finite, so NaN, Infinity and strings all fail. */
const byOption = <T extends z.ZodType>(value: T) => z.record(z.string().min(1), value);

/** This runtime's detail on one answer. */
export const answerDetailSchema = z
  .object({
    /** Option logits at temperature 1, keyed by option id (score levels by "0", "1", ...). */
    logits: byOption(z.number()),
    raw_probabilities: byOption(probability),
    temperature: z.number().positive(),
    /** Share of the whole vocabulary's probability the option letters hold; null when not read. */
    allowed_token_mass: probability.nullable(),
    prompt_sha256: sha256,
    prompt_version: z.string().min(1),
    /** "cyclic": the logits average the rotations of the options (absent from older runtimes). */
    option_order: z.enum(["declared", "cyclic"]).optional(),
    /** Forward passes behind the answer. */
    passes: count.optional(),
    input_tokens: count,
    reused_tokens: count,
    timings_ms: z.object({ render: z.number(), evaluate: z.number(), total: z.number() }),
  })
  .strict();
export type AnswerDetail = z.infer<typeof answerDetailSchema>;

const choiceAnswer = z.object({
  type: z.literal("choice"),
  choice: z.string(),
  probabilities: byOption(probability),
  confidence: probability,
  x_detail: answerDetailSchema.optional(),
});
const scoreAnswer = z.object({
  type: z.literal("score"),
  score: z.number().nonnegative(),
  legend: z.record(z.string(), z.string()),
  probabilities: byOption(probability),
  confidence: probability,
  x_detail: answerDetailSchema.optional(),
});
const noulAnswer = z.object({
  type: z.literal("noul"),
  noul: probability,
  x_detail: answerDetailSchema.optional(),
});

/** One answer: choice, score or noul. */
export const systemOneAnswerSchema = z.discriminatedUnion("type", [choiceAnswer, scoreAnswer, noulAnswer]);
export type SystemOneAnswer = z.infer<typeof systemOneAnswerSchema>;

/** A System One response. */
export const systemOneResponseSchema = z.object({
  id: z.string(),
  model: z.string(),
  answers: z.record(z.string(), systemOneAnswerSchema),
  usage: z.object({ input_tokens: count, output_tokens: count }),
  x_detail: z
    .object({ model_sha256: sha256, evaluated_tokens: count, total_ms: z.number().nonnegative() })
    .optional(),
});
export type SystemOneResponse = z.infer<typeof systemOneResponseSchema>;

/** What the pipeline reads from one answer: logits in the order of `optionIds`, and the hashes. */
export interface DecisionAnswer {
  readonly logits: number[];
  readonly allowedTokenMass: number | null;
  readonly modelSha256: string;
  readonly promptSha256: string;
  readonly promptVersion: string;
  /** How the options were laid out ("declared" when the runtime does not say). */
  readonly optionOrder?: OptionOrder;
}

/**
 * Reads the pipeline's answer from a response body: the schema must hold, the answer must be of
 * `type`, and its logits must be keyed by exactly `answerIds` (no option missing, none extra).
 * Throws a response-side {@link SystemOneViolationError} naming the first problem.
 */
export function readDecisionAnswer(
  body: unknown,
  type: QuestionType,
  answerIds: readonly string[],
): DecisionAnswer {
  const parsed = systemOneResponseSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw malformed(issue.path.join(".") || "body", issue.message);
  }
  const answer = parsed.data.answers[DECISION_QUESTION_KEY];
  if (!answer) throw malformed(undefined, `answers.${DECISION_QUESTION_KEY} is missing`);
  if (answer.type !== type) throw malformed(undefined, `expected a ${type} answer, got ${answer.type}`);
  const detail = answer.x_detail;
  const modelSha256 = parsed.data.x_detail?.model_sha256;
  if (!detail || !modelSha256) throw malformed(undefined, "x_detail (logits and hashes) is missing");
  const keys = Object.keys(detail.logits);
  const missing = answerIds.filter((id) => !Object.hasOwn(detail.logits, id));
  const extra = keys.filter((id) => !answerIds.includes(id));
  if (missing.length > 0 || extra.length > 0) {
    throw malformed(
      undefined,
      `logits must be keyed by ${answerIds.join(", ")}` +
        `${missing.length ? `; missing ${missing.join(", ")}` : ""}${extra.length ? `; extra ${extra.join(", ")}` : ""}`,
    );
  }
  return {
    logits: answerIds.map((id) => detail.logits[id]!),
    allowedTokenMass: detail.allowed_token_mass,
    modelSha256,
    promptSha256: detail.prompt_sha256,
    promptVersion: detail.prompt_version,
    optionOrder: detail.option_order ?? "declared",
  };
}

/** A response-side violation (the message reads "malformed answer: ..."). */
export function malformed(
  param: string | undefined,
  problem: string,
  cause?: unknown,
): SystemOneViolationError {
  return new SystemOneViolationError("response", param, problem, "malformed_answer", { cause });
}

type FloatMap = Record<string, JsonFloat>;

/** Values in option order, keyed by option id (the contract never aligns values by position). */
function byOptionId(ids: readonly string[], values: readonly number[]): FloatMap {
  return ordered(ids.map((id, i) => [id, float(values[i]!)] as const));
}

/** The System One answer to one question, with this runtime's detail under `x_detail`. */
function answerOf(result: QuestionResult, legend: readonly string[]): Wire<SystemOneAnswer> {
  const probabilities = byOptionId(result.optionIds, result.probabilities);
  const detail: Wire<AnswerDetail> = {
    logits: byOptionId(result.optionIds, result.logits),
    raw_probabilities: byOptionId(result.optionIds, result.rawProbabilities),
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
        legend: Object.fromEntries(legend.map((text, i) => [String(i), text])),
        probabilities,
        confidence: float(result.confidence),
        x_detail: detail,
      };
    case "noul":
      return { type: "noul", noul: float(result.noul!), x_detail: detail };
  }
}

/** The System One response to `request`, from the scorer's `result`; write it with `stringifyJson`. */
export function systemOneResponse(
  request: DecisionRequest,
  result: DecisionResult,
  modelName: string,
): Wire<SystemOneResponse> {
  // A score question's legend is its levels' texts, low to high, as the client wrote them.
  const legends = new Map(request.questions.map((q) => [q.key, q.options.map((o) => o.description)]));
  return {
    id: `so-${randomUUID()}`,
    model: modelName,
    answers: ordered(
      result.answers.map((answer) => [answer.key, answerOf(answer, legends.get(answer.key) ?? [])] as const),
    ),
    usage: { input_tokens: result.usage.inputTokens, output_tokens: 0 },
    x_detail: {
      model_sha256: result.modelSha256,
      evaluated_tokens: result.usage.evaluatedTokens,
      total_ms: float(result.totalMs),
    },
  };
}
