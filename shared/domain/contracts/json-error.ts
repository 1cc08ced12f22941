/** The error of JSON input that the contracts cannot read: where parsing found a problem. */
export class JsonInputError extends Error {
  override name = "JsonInputError";
  constructor(
    message: string,
    readonly param?: string,
  ) {
    super(message);
  }
}
