/**
 * What `decide calibrate` scores labelled states with, shared by the scoring loop
 * (`calibrate-scoring.ts`) and the sources it opens (the in-process one included), so that
 * neither imports the other's module for a type.
 */
import type { DecidesItems } from "../../shared/domain/decision-endpoint.ts";

/** Something that scores items, and how many requests it may take at once. */
export interface ScoringSource {
  /** For messages: the model file, endpoint name or URL. */
  readonly name: string;
  readonly endpoint: DecidesItems;
  readonly concurrency: number;
  close(): Promise<void>;
}

/** A labelled state waiting for its logits. */
export interface StateRow {
  readonly line: number;
  readonly state: unknown;
  readonly label: number;
  readonly group: string;
}
