/**
 * The System One contract between the decision endpoint and the pipeline, written once: the
 * answer and response shapes as zod schemas (the endpoint emits these types, the decide function
 * parses what comes back with these schemas), with option values keyed by option id, never by
 * position. The `x_detail` blocks are this runtime's extension; other System One servers omit
 * them, which is why the pipeline's own reading ({@link readDecisionAnswer}) requires them.
 */
import { z } from "zod";
import type { SystemOneQuestion } from "./request-builder.ts";
import { DECISION_QUESTION_KEY } from "./vocabulary.ts";

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

/** An answer that does not fit the contract: the endpoint failed, whatever its status said. */
export class MalformedAnswerError extends Error {
  override name = "MalformedAnswerError";
}

/** What the pipeline reads from one answer: logits in the order of `optionIds`, and the hashes. */
export interface DecisionAnswer {
  readonly logits: number[];
  readonly allowedTokenMass: number | null;
  readonly modelSha256: string;
  readonly promptSha256: string;
  readonly promptVersion: string;
  /** How the options were laid out ("declared" when the runtime does not say). */
  readonly optionOrder?: "declared" | "cyclic";
}

/**
 * Reads the pipeline's answer from a response body: the schema must hold, the answer must be of
 * `type`, and its logits must be keyed by exactly `answerIds` (no option missing, none extra).
 * Throws {@link MalformedAnswerError} naming the first problem.
 */
export function readDecisionAnswer(
  body: unknown,
  type: SystemOneQuestion["type"],
  answerIds: readonly string[],
): DecisionAnswer {
  const parsed = systemOneResponseSchema.safeParse(body);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new MalformedAnswerError(`malformed answer: ${issue.path.join(".") || "body"}: ${issue.message}`);
  }
  const answer = parsed.data.answers[DECISION_QUESTION_KEY];
  if (!answer)
    throw new MalformedAnswerError(`malformed answer: answers.${DECISION_QUESTION_KEY} is missing`);
  if (answer.type !== type)
    throw new MalformedAnswerError(`malformed answer: expected a ${type} answer, got ${answer.type}`);
  const detail = answer.x_detail;
  const modelSha256 = parsed.data.x_detail?.model_sha256;
  if (!detail || !modelSha256)
    throw new MalformedAnswerError("malformed answer: x_detail (logits and hashes) is missing");
  const keys = Object.keys(detail.logits);
  const missing = answerIds.filter((id) => !Object.hasOwn(detail.logits, id));
  const extra = keys.filter((id) => !answerIds.includes(id));
  if (missing.length > 0 || extra.length > 0) {
    throw new MalformedAnswerError(
      `malformed answer: logits must be keyed by ${answerIds.join(", ")}` +
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
