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
  systemOneRequestShape,
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
  type DecisionAnswer,
  malformed,
  readDecisionAnswer,
  type SystemOneAnswer,
  type SystemOneResponse,
  systemOneResponse,
  systemOneResponseSchema,
} from "./response.ts";
export type { DecisionResult, QuestionResult, QuestionTimings } from "./result.ts";
export { SystemOneViolationError } from "./violation.ts";
export {
  DECISION_QUESTION_KEY,
  MAX_OPTIONS,
  MIN_OPTIONS,
  OPTION_ORDERS,
  type OptionOrder,
  optionRuleBreach,
  PROMPT_LAYOUTS,
  type PromptLayout,
  QUESTION_TYPES,
  type QuestionType,
  SCORING_MODES,
  type ScoringMode,
  SYSTEM_ONE_PATH,
} from "./vocabulary.ts";
