/**
 * Generates llama-architecture GGUF models with deterministic weights: the test models and the
 * benchmark models of this project (no model can be downloaded on our machines).
 *
 * Random weights give meaningless answers but real timings and real code paths: the file loads
 * through node-llama-cpp exactly like a user's model.
 */

import { SeededRandom } from "../../shared/domain/random.ts";
import {
  type GgmlTensorTypeName,
  GgufFileType,
  QUANT_BLOCK_BYTES,
  QUANT_BLOCK_VALUES,
} from "../gguf/format.ts";
import { encodeTensor, float32ToFloat16Bits } from "../gguf/quantize.ts";
import { type GgufTensorSpec, type GgufValue, gguf, writeGgufFile } from "../gguf/writer.ts";
import { answerCarrierEditor, type BlockEditor } from "./answer-carrier.ts";
import { CHATML_TEMPLATE } from "./chat-template.ts";
import type { ModelShape } from "./shapes.ts";
import { buildVocabulary, type Vocabulary } from "./vocabulary.ts";

/** Options of {@link synthesizeModel}. */
export interface SynthesizeOptions {
  /** Where to write the GGUF file. */
  readonly out: string;
  /** Seed of the weights. @default 1 */
  readonly seed?: number;
  /** Overrides the shape's storage type of the weight matrices. @default the shape's */
  readonly weightType?: GgmlTensorTypeName;
  /** Extra whole words for the vocabulary. @default none */
  readonly extraWords?: readonly string[];
  /** Extra raw vocabulary pieces. @default none */
  readonly extraPieces?: readonly string[];
  /**
   * Extra pieces typed user-defined, which llama.cpp splits out of a text before it merges the
   * rest (tests use them to probe tokenizer shortcuts). @default none
   */
  readonly userDefinedPieces?: readonly string[];
  /** Whether SentencePiece adds a space before the text (as Llama 2 files say). @default false */
  readonly addSpacePrefix?: boolean;
  /** Metadata keys to leave out (tests use it to make files llama.cpp must refuse). @default none */
  readonly omitMetadata?: readonly string[];
  /**
   * Vocabulary pieces the model answers with: they hold nearly all the probability at every
   * position, as the option letters do for a model that answers the question
   * (`answer-carrier.ts`). Needs tied embeddings and a quantized weight type. @default none
   */
  readonly answerPieces?: readonly string[];
}

/** What was written. */
export interface SynthesizedModel {
  readonly path: string;
  readonly bytes: number;
  readonly parameters: number;
  readonly vocabularySize: number;
  readonly weightType: GgmlTensorTypeName;
}

/** Elements per generated chunk: small enough to stream, large enough to write quickly. */
const CHUNK_ELEMENTS = 1 << 21;

/** Writes a model of `shape` to `options.out`. */
export async function synthesizeModel(
  shape: ModelShape,
  options: SynthesizeOptions,
): Promise<SynthesizedModel> {
  const weightType = options.weightType ?? shape.weightType;
  const vocabulary = buildVocabulary({
    size: shape.vocabSize,
    extraWords: options.extraWords,
    extraPieces: options.extraPieces,
    userDefinedPieces: options.userDefinedPieces,
  });
  const random = new SeededRandom(options.seed ?? 1);
  const embedding = options.answerPieces
    ? answerEmbedding(shape, vocabulary, weightType, options.answerPieces)
    : undefined;
  const tensors = modelTensors(shape, vocabulary.tokens.length, weightType, random, embedding);
  const metadata = modelMetadata(shape, vocabulary, weightType);
  if (options.addSpacePrefix) metadata.set("tokenizer.ggml.add_space_prefix", gguf.bool(true));
  for (const key of options.omitMetadata ?? []) metadata.delete(key);
  const bytes = await writeGgufFile(options.out, { metadata, tensors });
  const parameters = tensors.reduce((sum, t) => sum + t.dims.reduce((a, b) => a * b, 1), 0);
  return { path: options.out, bytes, parameters, vocabularySize: vocabulary.tokens.length, weightType };
}

/** The `general.*`, `llama.*` and `tokenizer.*` keys llama.cpp needs to load the model. */
export function modelMetadata(
  shape: ModelShape,
  vocabulary: Vocabulary,
  weightType: GgmlTensorTypeName,
): Map<string, GgufValue> {
  const headDim = shape.width / shape.heads;
  return new Map<string, GgufValue>([
    ["general.architecture", gguf.str("llama")],
    ["general.name", gguf.str(`decision-pipeline ${shape.name} (generated)`)],
    ["general.file_type", gguf.u32(GgufFileType[weightType])],
    ["llama.context_length", gguf.u32(shape.contextLength)],
    ["llama.embedding_length", gguf.u32(shape.width)],
    ["llama.block_count", gguf.u32(shape.layers)],
    ["llama.feed_forward_length", gguf.u32(shape.ffn)],
    ["llama.attention.head_count", gguf.u32(shape.heads)],
    ["llama.attention.head_count_kv", gguf.u32(shape.kvHeads)],
    ["llama.attention.layer_norm_rms_epsilon", gguf.f32(shape.rmsEpsilon)],
    ["llama.rope.freq_base", gguf.f32(shape.ropeTheta)],
    ["llama.rope.dimension_count", gguf.u32(headDim)],
    ["llama.vocab_size", gguf.u32(vocabulary.tokens.length)],
    ["tokenizer.ggml.model", gguf.str("llama")],
    ["tokenizer.ggml.tokens", gguf.strings(vocabulary.tokens)],
    ["tokenizer.ggml.scores", gguf.f32s(vocabulary.scores)],
    ["tokenizer.ggml.token_type", gguf.i32s(vocabulary.types)],
    ["tokenizer.ggml.bos_token_id", gguf.u32(vocabulary.ids.bos)],
    ["tokenizer.ggml.eos_token_id", gguf.u32(vocabulary.ids.eos)],
    ["tokenizer.ggml.eot_token_id", gguf.u32(vocabulary.ids.imEnd)],
    ["tokenizer.ggml.unknown_token_id", gguf.u32(vocabulary.ids.unknown)],
    ["tokenizer.ggml.padding_token_id", gguf.u32(vocabulary.ids.unknown)],
    ["tokenizer.ggml.add_bos_token", gguf.bool(true)],
    ["tokenizer.ggml.add_eos_token", gguf.bool(false)],
    // Without this, SentencePiece adds a space after every special token (docs/architecture.md).
    ["tokenizer.ggml.add_space_prefix", gguf.bool(false)],
    ["tokenizer.chat_template", gguf.str(CHATML_TEMPLATE)],
  ]);
}

/** The token embedding's carrier for `answerPieces`, checked. */
function answerEmbedding(
  shape: ModelShape,
  vocabulary: Vocabulary,
  weightType: GgmlTensorTypeName,
  answerPieces: readonly string[],
): BlockEditor {
  // An untied output projection would not see the embedding's carrier.
  if (!shape.tiedEmbeddings)
    throw new RangeError(`answer pieces need tied embeddings; ${shape.name} has none`);
  const ids = answerPieces.map((piece) => {
    const id = vocabulary.tokens.indexOf(piece);
    if (id < 0) throw new RangeError(`answer piece ${JSON.stringify(piece)} is not in the vocabulary`);
    return id;
  });
  return answerCarrierEditor(weightType, shape.width, new Set(ids));
}

function modelTensors(
  shape: ModelShape,
  vocabSize: number,
  weightType: GgmlTensorTypeName,
  random: SeededRandom,
  embedding?: BlockEditor,
): GgufTensorSpec[] {
  const headDim = shape.width / shape.heads;
  if (!Number.isInteger(headDim))
    throw new RangeError(`width ${shape.width} is not divisible by ${shape.heads} heads`);
  const kvWidth = shape.kvHeads * headDim;
  const matrix = (name: string, rows: number, columns: number, std = shape.weightStd): GgufTensorSpec =>
    weightTensor(name, [rows, columns], weightType, std, random);
  const norm = (name: string): GgufTensorSpec => onesTensor(name, shape.width);

  const tensors: GgufTensorSpec[] = [
    weightTensor(
      "token_embd.weight",
      [shape.width, vocabSize],
      weightType,
      shape.embeddingStd,
      random,
      embedding,
    ),
  ];
  for (let layer = 0; layer < shape.layers; layer++) {
    const blk = `blk.${layer}`;
    tensors.push(
      norm(`${blk}.attn_norm.weight`),
      matrix(`${blk}.attn_q.weight`, shape.width, shape.width),
      matrix(`${blk}.attn_k.weight`, shape.width, kvWidth),
      matrix(`${blk}.attn_v.weight`, shape.width, kvWidth),
      matrix(`${blk}.attn_output.weight`, shape.width, shape.width),
      norm(`${blk}.ffn_norm.weight`),
      matrix(`${blk}.ffn_gate.weight`, shape.width, shape.ffn),
      matrix(`${blk}.ffn_up.weight`, shape.width, shape.ffn),
      matrix(`${blk}.ffn_down.weight`, shape.ffn, shape.width),
    );
  }
  tensors.push(norm("output_norm.weight"));
  // Omitting output.weight ties the output projection to token_embd.weight in llama.cpp.
  if (!shape.tiedEmbeddings)
    tensors.push(matrix("output.weight", shape.width, vocabSize, shape.embeddingStd));
  return tensors;
}

function onesTensor(name: string, length: number): GgufTensorSpec {
  return {
    name,
    dims: [length],
    type: "F32",
    chunks: () => [encodeTensor("F32", new Float32Array(length).fill(1))],
  };
}

/**
 * A weight matrix of random values with the given standard deviation. Float types draw floats;
 * quantized types draw the quantized blocks directly (a fixed scale and uniform codes), which is
 * what keeps a 500 MB model fast to write. `edit`, for quantized types, rewrites chosen blocks.
 */
function weightTensor(
  name: string,
  dims: readonly number[],
  type: GgmlTensorTypeName,
  std: number,
  random: SeededRandom,
  edit?: BlockEditor,
): GgufTensorSpec {
  const elements = dims.reduce((a, b) => a * b, 1);
  function* floatChunks(): Iterable<Uint8Array> {
    for (let done = 0; done < elements; done += CHUNK_ELEMENTS) {
      yield encodeTensor(type, random.uniformFloats(Math.min(CHUNK_ELEMENTS, elements - done), std));
    }
  }
  function* blockChunks(): Iterable<Uint8Array> {
    const blockBytes = QUANT_BLOCK_BYTES[type];
    // Uniform codes: int8 in [-128, 127] (std 73.9) or 4-bit in [0, 15] minus 8 (std 4.62).
    const codeStd = type === "Q8_0" ? 256 / Math.sqrt(12) : 16 / Math.sqrt(12);
    const scaleBits = float32ToFloat16Bits(std / codeStd);
    const blocks = elements / QUANT_BLOCK_VALUES;
    const blocksPerChunk = CHUNK_ELEMENTS / QUANT_BLOCK_VALUES;
    for (let done = 0; done < blocks; done += blocksPerChunk) {
      const count = Math.min(blocksPerChunk, blocks - done);
      const chunk = random.fillBytes(new Uint8Array(count * blockBytes));
      for (let b = 0; b < count; b++) {
        chunk[b * blockBytes] = scaleBits & 0xff;
        chunk[b * blockBytes + 1] = scaleBits >> 8;
        edit?.(done + b, chunk, b * blockBytes);
      }
      yield chunk;
    }
  }
  const quantized = type === "Q8_0" || type === "Q4_0";
  return { name, dims, type, chunks: quantized ? blockChunks : floatChunks };
}
