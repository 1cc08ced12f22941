/**
 * Several cached prefixes, one llama.cpp sequence each (each in a context of its own), used one at a time: a prompt goes to the
 * slot whose cached tokens it shares most of, so that items of interleaved policies each reuse
 * their own preamble instead of evicting one another's. A slot counts as a hit only when the
 * prompt reuses at least half of what the slot holds (sharing just the chat template and the
 * instruction is not worth destroying another policy's preamble); otherwise the prompt takes an
 * empty or the least recently used slot. Reuse stays exact: each slot is the same erase-back
 * sequence as before, evaluated alone.
 */
import type { Token } from "node-llama-cpp";
import type { DecisionModel } from "../runtime/decision-model.ts";
import { commonPrefixLength, type PromptSequence } from "./prompt-sequence.ts";

/** Counters for /healthz and the benchmarks. */
export interface SlotStats {
  readonly slots: number;
  readonly hits: number;
  readonly misses: number;
  /** Tokens taken from a cache instead of evaluated, over all prompts. */
  readonly reusedTokens: number;
}

/** Fewest shared tokens that count as reuse. */
const MIN_REUSE = 8;

/** A pool of prefix-caching sequences. Not safe for concurrent use: callers serialize. */
export class PrefixSlots {
  private readonly lastUsed: number[];
  private clock = 0;
  private hits = 0;
  private misses = 0;
  private reused = 0;

  constructor(private readonly sequences: readonly PromptSequence[]) {
    if (sequences.length === 0) throw new RangeError("at least one prefix slot is needed");
    this.lastUsed = sequences.map(() => 0);
  }

  /** The slot to evaluate `tokens` on (counted as a hit or a miss). */
  pick(tokens: readonly Token[]): PromptSequence {
    let best = 0;
    let bestShared = -1;
    for (const [i, sequence] of this.sequences.entries()) {
      const shared = commonPrefixLength(sequence.tokens, tokens);
      if (shared > bestShared) {
        best = i;
        bestShared = shared;
      }
    }
    const held = this.sequences[best]!.length;
    let chosen = best;
    if (bestShared >= MIN_REUSE && bestShared * 2 >= held) {
      this.hits++;
      this.reused += Math.max(0, Math.min(bestShared, tokens.length - 2));
    } else {
      this.misses++;
      chosen = this.leastRecentlyUsed();
    }
    this.lastUsed[chosen] = ++this.clock;
    return this.sequences[chosen]!;
  }

  /** The first slot, for work that does not choose (chat generation, likelihood scoring). */
  get first(): PromptSequence {
    return this.sequences[0]!;
  }

  /** Forgets every cached prefix. */
  async clear(): Promise<void> {
    for (const sequence of this.sequences) await sequence.clear();
  }

  /** Slots and their counters. */
  stats(): SlotStats {
    return { slots: this.sequences.length, hits: this.hits, misses: this.misses, reusedTokens: this.reused };
  }

  /** An empty slot if there is one, else the one used longest ago. */
  private leastRecentlyUsed(): number {
    const age = (i: number) => (this.sequences[i]!.length === 0 ? -1 : this.lastUsed[i]!);
    let oldest = 0;
    for (let i = 1; i < this.sequences.length; i++) if (age(i) < age(oldest)) oldest = i;
    return oldest;
  }
}

/** Most slots "auto" chooses: past a handful of policies, a bigger pool buys little. */
const MAX_AUTO_SLOTS = 8;

/**
 * How many prefix slots to create: the number asked for, or for "auto" as many sequences of
 * `contextSize` tokens as the budget holds, by llama.cpp's own estimate of one sequence's KV cache.
 */
export async function prefixSlotCount(
  model: DecisionModel,
  contextSize: number,
  options: { readonly prefixSlots?: number | "auto"; readonly prefixCacheBytes?: number },
): Promise<number> {
  const asked = options.prefixSlots ?? 1;
  if (asked !== "auto") return Math.max(1, Math.floor(asked));
  const perSlot = (
    await model.model.fileInsights.estimateContextResourceRequirementsV2({
      contextSize,
      modelGpuLayers: 0,
      sequences: 1,
    })
  ).cpuRam;
  const budget = options.prefixCacheBytes ?? 512 * 1024 * 1024;
  return Math.max(1, Math.min(MAX_AUTO_SLOTS, Math.floor(budget / Math.max(1, perSlot))));
}
