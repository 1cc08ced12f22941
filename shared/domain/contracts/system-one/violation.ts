/**
 * The one error of the System One contract: a message that breaks it, in either direction. A
 * request the endpoint refuses answers 422 with `param` and `code` as they are (never retried);
 * an answer the pipeline cannot read means the endpoint failed, whatever its status said.
 */

/** Which message broke the contract: a request coming in, or an answer coming back. */
export type ContractSide = "request" | "response";

/** Codes of a violation: `invalid_value` for a malformed field, `invalid_decision` for a well-formed one the decision cannot use. */
export type ViolationCode = "invalid_value" | "invalid_decision" | "malformed_answer";

/** A System One message that breaks the contract; `param` names the field as System One does (`questions.team.criteria`). */
export class SystemOneViolationError extends Error {
  override name = "SystemOneViolationError";

  constructor(
    readonly side: ContractSide,
    readonly param: string | undefined,
    readonly problem: string,
    readonly code: ViolationCode = side === "response" ? "malformed_answer" : "invalid_value",
    options?: ErrorOptions,
  ) {
    const where = param ? `${param}: ${problem}` : problem;
    super(side === "response" ? `malformed answer: ${where}` : where, options);
  }
}
