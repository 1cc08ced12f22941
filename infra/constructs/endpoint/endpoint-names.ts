/**
 * The names of a SageMaker endpoint and its production variant, derived from the stack and the
 * instance type so that a new instance type is a new endpoint (and a replaced one, not an edited one).
 */
import { createHash } from "node:crypto";

/** A variant name for an instance type: `ml.c6i.xlarge` → `ml-c6i-xlarge`. */
export function variantNameOf(instanceType: string): string {
  return instanceType.replace(/[^A-Za-z0-9]+/g, "-");
}

/** The endpoint's name: the stack's and the variant's, within SageMaker's 63 characters. */
export function endpointNameOf(stackName: string, variantName: string): string {
  const full = `${stackName}-${variantName}`;
  if (full.length <= 63) return full;
  const hash = createHash("sha256").update(full).digest("hex").slice(0, 8);
  return `${stackName.slice(0, 63 - variantName.length - hash.length - 2)}-${hash}-${variantName}`;
}
