/**
 * Errors of the decision runtime. Callers decide retry or give up with `instanceof`:
 * an invalid decision or an unusable model never succeeds on retry.
 */

/** Base class of every error the runtime raises on purpose. */
export class DecisionRuntimeError extends Error {
  override name = "DecisionRuntimeError";
  /** Stable machine-readable code. */
  readonly code: string;

  constructor(code: string, message: string, options?: ErrorOptions) {
    super(message, options);
    this.code = code;
  }
}

/** The decision asked for is invalid; `field` names the offending input (e.g. `questions[0].options`). */
export class InvalidDecisionError extends DecisionRuntimeError {
  override name = "InvalidDecisionError";
  readonly field: string;

  constructor(field: string, message: string, code = "invalid_decision", options?: ErrorOptions) {
    super(code, `${field}: ${message}`, options);
    this.field = field;
  }
}

/** The prompt does not fit in the context; nothing is truncated silently. */
export class PromptTooLongError extends InvalidDecisionError {
  override name = "PromptTooLongError";
  readonly promptTokens: number;
  readonly contextSize: number;

  constructor(
    field: string,
    promptTokens: number,
    contextSize: number,
    bound: "at least" | "exactly" = "exactly",
  ) {
    super(
      field,
      `the prompt needs ${bound === "at least" ? "at least " : ""}${promptTokens} tokens but the context holds ${contextSize}; shorten it or raise the context size`,
      "prompt_too_long",
    );
    this.promptTokens = promptTokens;
    this.contextSize = contextSize;
  }
}

/** The model file is missing, corrupt, truncated or lacks what llama.cpp needs. */
export class ModelFileError extends DecisionRuntimeError {
  override name = "ModelFileError";
  readonly path: string;

  constructor(path: string, problem: string, options?: ErrorOptions) {
    super("model_file_invalid", `model file ${path}: ${problem}`, options);
    this.path = path;
  }
}

/** The model's tokenizer cannot read option letters as single, distinct answer tokens. */
export class SlotCheckError extends DecisionRuntimeError {
  override name = "SlotCheckError";

  constructor(message: string) {
    super("slot_check_failed", message);
  }
}

/** The runtime was used after `dispose()`. */
export class RuntimeDisposedError extends DecisionRuntimeError {
  override name = "RuntimeDisposedError";

  constructor(what: string) {
    super("disposed", `${what} was disposed`);
  }
}
