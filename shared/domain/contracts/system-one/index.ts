/**
 * The System One contract between the decision endpoint and the pipeline, both directions in one
 * folder: the vocabulary, the request (schema, validation, the pipeline's builder), the scorer's
 * result, the response (schemas, writer, reader) and the one violation error.
 */

export {
  type DecisionOption,
  type DecisionQuestion,
  type DecisionRequest,
  isSystemOneBody,
  parseSystemOneRequest,
  type SystemOneQuestion,
  type SystemOneRequest,
} from "./request.ts";
export {
  answerIdsOf,
  type DeclaredQuestion,
  type PolicyQuestion,
  systemOneQuestion,
  systemOneRequest,
} from "./request-builder.ts";
export {
  type AnswerDetail,
  answerDetailSchema,
  type DecisionAnswer,
  malformed,
  readDecisionAnswer,
  type SystemOneAnswer,
  type SystemOneResponse,
  systemOneAnswerSchema,
  systemOneResponse,
  systemOneResponseSchema,
} from "./response.ts";
export type { DecisionResult, QuestionResult, QuestionTimings } from "./result.ts";
export { type ContractSide, SystemOneViolationError, type ViolationCode } from "./violation.ts";
export * from "./vocabulary.ts";
