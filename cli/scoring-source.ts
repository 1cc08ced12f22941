/**
 * What calibration scores with: the endpoint (a model in this process, a deployed endpoint or a
 * URL) and how many requests it may take at once. Its own file, so that the in-process source
 * and the module that chooses one do not import each other.
 */
import type { DecidesItems } from "../shared/domain/decision-endpoint.ts";

/** Something that scores items, and how many requests it may take at once. */
export interface ScoringSource {
  /** For messages: the model file, endpoint name or URL. */
  readonly name: string;
  readonly endpoint: DecidesItems;
  readonly concurrency: number;
  close(): Promise<void>;
}
