/**
 * Errors of the capacity model: a template it cannot read, and a question it cannot answer.
 */

/** The template lacks something the model needs, or holds a shape it does not know. */
export class TemplateShapeError extends Error {
  override name = "TemplateShapeError";
  constructor(
    /** The resource (logical id) or area at fault. */
    readonly where: string,
    /** The property path at fault, e.g. `ProductionVariants[0].InstanceType`. */
    readonly property: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(`template: ${where}: ${property}: ${message}`, options);
  }
}

/** The model has no figure for what was asked (an instance type without a price or a measured time). */
export class UnknownCapacityError extends Error {
  override name = "UnknownCapacityError";
  constructor(
    readonly subject: string,
    message: string,
    options?: ErrorOptions,
  ) {
    super(message, options);
  }
}
