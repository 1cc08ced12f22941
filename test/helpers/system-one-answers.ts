/**
 * Contract-valid System One responses built without a model (the instant endpoint of the
 * pipeline benchmark, the unit tests of the endpoint client), and the ids a request asks for.
 */
import {
  DECISION_QUESTION_KEY,
  type SystemOneRequest,
  type SystemOneResponse,
} from "../../shared/domain/contracts/system-one/index.ts";

/** The ids the answer to `request`'s decision question is keyed by. */
export function answerIdsOf(request: SystemOneRequest): string[] {
  const question = request.questions[DECISION_QUESTION_KEY]!;
  if (question.type === "noul") return ["true", "false"];
  return Array.isArray(question.criteria)
    ? question.criteria.map((_, i) => String(i))
    : Object.keys(question.criteria);
}

/** A valid response to `request` whose logits are `logits` (in answer-id order). */
export function answerFor(request: SystemOneRequest, logits: readonly number[]): SystemOneResponse {
  const ids = answerIdsOf(request);
  const max = Math.max(...logits);
  const weights = logits.map((l) => Math.exp(l - max));
  const total = weights.reduce((a, b) => a + b, 0);
  const probabilities = Object.fromEntries(ids.map((id, i) => [id, weights[i]! / total]));
  const byId = Object.fromEntries(ids.map((id, i) => [id, logits[i]!]));
  const top = ids[logits.indexOf(max)]!;
  const detail = {
    logits: byId,
    raw_probabilities: probabilities,
    temperature: 1,
    allowed_token_mass: 0.5,
    prompt_sha256: "0".repeat(64),
    prompt_version: "instant",
    input_tokens: 10,
    reused_tokens: 0,
    timings_ms: { render: 0, evaluate: 0, total: 0 },
  };
  const question = request.questions[DECISION_QUESTION_KEY]!;
  const n = ids.length;
  const confidence = Math.min(1, Math.max(0, (n * probabilities[top]! - 1) / (n - 1)));
  const answer =
    question.type === "noul"
      ? { type: "noul" as const, noul: probabilities.true!, x_detail: detail }
      : question.type === "score"
        ? {
            type: "score" as const,
            score: ids.reduce((sum, id, i) => sum + i * probabilities[id]!, 0),
            legend: Object.fromEntries(ids.map((id, i) => [id, String(i)])),
            probabilities,
            confidence,
            x_detail: detail,
          }
        : { type: "choice" as const, choice: top, probabilities, confidence, x_detail: detail };
  return {
    id: "so-instant",
    model: "instant",
    answers: { [DECISION_QUESTION_KEY]: answer },
    usage: { input_tokens: 10, output_tokens: 0 },
    x_detail: { model_sha256: "0".repeat(64), evaluated_tokens: 10, total_ms: 0 },
  };
}
