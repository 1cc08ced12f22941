/**
 * Full-option log-likelihood scoring, for options given as free text rather than letters:
 * log p(option text | prompt), summed over the option's tokens (raw) and divided by their count
 * (length-normalized).
 *
 * The prompt is evaluated once; each option is appended after it and erased back afterwards,
 * so N options cost one prompt plus their own tokens. Reading a token's true probability needs
 * the full-vocabulary map at every option position through node-llama-cpp's public API: about
 * 150 ms per position at a 150k vocabulary on 2 CPU cores. Correct, but slow at that size: prefer
 * letter scoring when the options can be lettered.
 */
import type { Token } from "node-llama-cpp";
import type { PromptSequence } from "./prompt-sequence.ts";

/** Smallest positive float32: floor for probabilities that underflowed, so logs stay finite. */
const PROBABILITY_FLOOR = 1.4e-45;

/** Log-likelihoods of each option, in option order. */
export interface OptionLikelihoods {
  /** Σ log p(token) over each option's tokens. */
  readonly raw: number[];
  /** `raw / token count`: does not favour short options. */
  readonly normalized: number[];
  readonly reusedTokens: number;
  readonly evaluatedTokens: number;
}

/** One question's likelihood detail, per option: raw and normalized log-likelihoods and token counts. */
export interface LikelihoodDetail {
  readonly raw: number[];
  readonly normalized: number[];
  readonly tokens: number[];
}

/**
 * Scores `optionTokens` as continuations of `promptTokens`.
 *
 * @param reusePrompt keep the evaluated prompt between options (default); `false` re-evaluates it
 *   from scratch for every option, which exists to check and measure the reuse.
 */
export async function scoreOptionLikelihoods(
  sequence: PromptSequence,
  promptTokens: readonly Token[],
  optionTokens: readonly (readonly Token[])[],
  reusePrompt = true,
): Promise<OptionLikelihoods> {
  const raw: number[] = [];
  let reusedTokens = 0;
  let evaluatedTokens = 0;
  let atPromptEnd: ReadonlyMap<Token, number> | undefined;
  for (const tokens of optionTokens) {
    if (!atPromptEnd || !reusePrompt) {
      if (!reusePrompt) await sequence.clear();
      const evaluation = await sequence.evaluate(promptTokens, { probabilities: true });
      atPromptEnd = evaluation.probabilities;
      reusedTokens += evaluation.reusedTokens;
      evaluatedTokens += evaluation.evaluatedTokens;
    } else {
      await sequence.truncate(promptTokens.length);
      reusedTokens += promptTokens.length;
    }
    let logLikelihood = logOf(atPromptEnd, tokens[0]!);
    const following = await sequence.extend(tokens.slice(0, -1));
    evaluatedTokens += following.length;
    following.forEach((probabilities, i) => {
      logLikelihood += logOf(probabilities, tokens[i + 1]!);
    });
    raw.push(logLikelihood);
  }
  const normalized = raw.map((value, i) => value / optionTokens[i]!.length);
  return { raw, normalized, reusedTokens, evaluatedTokens };
}

function logOf(probabilities: ReadonlyMap<Token, number>, token: Token): number {
  return Math.log(Math.max(probabilities.get(token) ?? 0, PROBABILITY_FLOOR));
}
