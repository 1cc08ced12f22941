/**
 * What the scorer answers: per question, the option distribution with its provenance (prompt
 * version and hash, tokens evaluated and reused) and timings; per request, the model's hash and
 * the token usage. Plain data, serialised by the endpoint's system-one and chat routes.
 */
import type { OptionOrder, QuestionType, ScoringMode } from "./vocabulary.ts";

/** Milliseconds spent on each step of one question. */
export interface QuestionTimings {
  readonly renderMs: number;
  readonly evaluateMs: number;
  readonly readoutMs: number;
  readonly totalMs: number;
}

/** The answer to one question. */
export interface QuestionResult {
  readonly key: string;
  readonly type: QuestionType;
  readonly scoring: ScoringMode;
  readonly optionIds: readonly string[];
  /** Probabilities at the question's temperature, in option order. */
  readonly probabilities: readonly number[];
  /** Probabilities at temperature 1. */
  readonly rawProbabilities: readonly number[];
  /** Option logits (log-probabilities; shift-invariant, so only their differences matter). */
  readonly logits: readonly number[];
  readonly temperature: number;
  /** Id of the most probable option (never changed by the temperature). */
  readonly chosen: string;
  /** `clamp((n · max p − 1) / (n − 1), 0, 1)`. */
  readonly confidence: number;
  /** Expected level `Σ i · p_i` (score questions). */
  readonly score?: number;
  /** p(true) (noul questions). */
  readonly noul?: number;
  /** Full-vocabulary probability held by the option letters; null when not read or not letters. */
  readonly allowedTokenMass: number | null;
  /** Per-option log-likelihood detail (likelihood scoring). */
  readonly likelihood?: {
    readonly raw: readonly number[];
    readonly normalized: readonly number[];
    readonly tokens: readonly number[];
  };
  /** How the options were laid out: one pass in declared order, or averaged over rotations. */
  readonly optionOrder: OptionOrder;
  /** Forward passes behind the answer (n under the cyclic order). */
  readonly passes: number;
  /** Prompt tokens over all passes. */
  readonly inputTokens: number;
  /** Prompt tokens taken from the cache instead of evaluated. */
  readonly reusedTokens: number;
  /**
   * Tokens evaluated: the prompt's tokens after the cached prefix, plus the last two again for
   * each further readout at the answer position (the allowed-token mass takes one or two).
   */
  readonly evaluatedTokens: number;
  readonly promptVersion: string;
  readonly promptSha256: string;
  readonly timings: QuestionTimings;
}

/** The answers to a decision request. */
export interface DecisionResult {
  readonly modelSha256: string;
  readonly answers: readonly QuestionResult[];
  readonly usage: { readonly inputTokens: number; readonly evaluatedTokens: number };
  readonly totalMs: number;
}
