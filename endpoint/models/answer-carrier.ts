/**
 * Makes a generated model answer with chosen tokens, the way a model that understands a question
 * puts the option letters on top of its next-token distribution. Random weights alone never do:
 * their top token is an arbitrary one of the vocabulary. A benchmark whose readout path depends on
 * what is on top (the allowed-token mass reads a letter on top cheaply, anything else through the
 * full map, `endpoint/scorer/question-pass.ts`) then times the path a real model's answers take.
 *
 * How: one dimension of the token embedding, the carrier, holds the same value in every token's
 * row, and a slightly larger one in the answer tokens' rows. Every token's input embedding adds
 * the carrier to the residual stream, so it dominates the last position's normalized state there
 * whatever the random layers add; through the tied output projection the carrier then adds
 * carrier x value to every token's logit, most to the answer tokens. Only values change: shapes,
 * types and therefore every timing of the model stay those of the random model.
 */
import type { GgmlTensorTypeName } from "../gguf/format.ts";
import { QUANT_BLOCK_VALUES } from "../gguf/format.ts";
import { float32ToFloat16Bits } from "../gguf/quantize.ts";

/**
 * The carrier's value in every token's row, and how much more the answer tokens' rows hold, per
 * storage type. Tuned on the Qwen2-0.5B shape (weight standard deviation 0.02, 24 layers) so that
 * two answer tokens hold about 0.99 of the probability at a decision's answer position (0.988 in
 * Q8_0, 0.984 in Q4_0, prompts of 197 to 1,157 tokens), spread between them by the random
 * weights; other shapes put them on top with another share (docs/benchmarks.md). Q4_0 needs the larger carrier: its
 * uniform random codes (-8 to 7) have a mean of -0.5, a bias that the layers add to every
 * dimension of the residual stream and that a small carrier does not outweigh.
 */
export const ANSWER_CARRIER = {
  Q8_0: { carrier: 14.6, lift: 2.4 },
  Q4_0: { carrier: 105, lift: 0.62 },
} as const;

/** Edits one quantized block in place: `block` is its index in the tensor, `offset` its first byte in `bytes`. */
export type BlockEditor = (block: number, bytes: Uint8Array, offset: number) => void;

/**
 * The editor that writes the carrier into a quantized token embedding of `width` columns: the
 * first value of each token's row holds `carrier`, and `carrier + lift` in the rows of
 * `answerTokens`; the rest of that block is zero. The value is the largest code times the
 * block's scale, so the answer tokens differ by their scale alone and the lift can be any size.
 */
export function answerCarrierEditor(
  type: GgmlTensorTypeName,
  width: number,
  answerTokens: ReadonlySet<number>,
): BlockEditor {
  if (type !== "Q8_0" && type !== "Q4_0")
    throw new RangeError(`an answer carrier needs a quantized token embedding (Q8_0 or Q4_0), not ${type}`);
  if (width % QUANT_BLOCK_VALUES !== 0)
    throw new RangeError(`width ${width} is not a multiple of ${QUANT_BLOCK_VALUES}`);
  const blocksPerRow = width / QUANT_BLOCK_VALUES;
  const code = type === "Q8_0" ? 127 : 7;
  const { carrier, lift } = ANSWER_CARRIER[type];
  const otherScale = float32ToFloat16Bits(carrier / code);
  const answerScale = float32ToFloat16Bits((carrier + lift) / code);
  return (block, bytes, offset) => {
    if (block % blocksPerRow !== 0) return;
    const scale = answerTokens.has(block / blocksPerRow) ? answerScale : otherScale;
    bytes[offset] = scale & 0xff;
    bytes[offset + 1] = scale >> 8;
    if (type === "Q8_0") {
      bytes.fill(0, offset + 2, offset + 2 + QUANT_BLOCK_VALUES);
      bytes[offset + 2] = code;
    } else {
      // Q4_0 stores value + 8 in nibbles: 0x88 is two zeros; value 0 is the low nibble of byte 0.
      bytes.fill(0x88, offset + 2, offset + 2 + QUANT_BLOCK_VALUES / 2);
      bytes[offset + 2] = 0x80 | (code + 8);
    }
  };
}
