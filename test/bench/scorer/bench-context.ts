/**
 * What the sections of `npm run bench:scorer` share: one model, the scorer under test, and a
 * second context of the same settings for pure prefill (test/bench/scorer.bench.ts builds it).
 */
import type { Token } from "node-llama-cpp";
import type { DecisionModel } from "../../../endpoint/runtime/decision-model.ts";
import type { PromptSequence } from "../../../endpoint/scorer/prompt-sequence.ts";
import type { DecisionScorer } from "../../../endpoint/scorer/scorer.ts";
import { timed } from "../bench-helpers.ts";

/** The model, the scorer and the pure-prefill sequence every section measures with. */
export interface ScorerBench {
  readonly model: DecisionModel;
  readonly scorer: DecisionScorer;
  /** A sequence of a second context with the scorer's settings, for prefill with no readout. */
  readonly prefill: PromptSequence;
  readonly contextSize: number;
  /** How many paired blocks a section times (`--blocks`, 3 by default). */
  readonly blocks: number;
}

/** Evaluates `tokens` from an empty cache with no readout: the pure prefill cost. */
export async function pureprefill(bench: ScorerBench, tokens: readonly Token[]): Promise<number> {
  await bench.prefill.clear();
  return timed(() => bench.prefill.prefill(tokens, false));
}

/**
 * Evaluates `tokens` from an empty cache and reads the greedy next token after the last one: the
 * prefill plus the one row of logits that any readout needs. A pure prefill asks llama.cpp for no
 * output, so it skips the output projection (vocabulary x width, a 151,936 x 896 matrix-vector
 * product at this shape); every decision pays it once per question.
 */
export async function prefillWithOutput(bench: ScorerBench, tokens: readonly Token[]): Promise<number> {
  await bench.prefill.clear();
  return timed(() => bench.prefill.prefill(tokens, true));
}
