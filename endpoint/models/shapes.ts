/**
 * Model shapes the generator knows: a tiny one for tests and the real dimensions of two
 * Qwen2 models for benchmarks (written in llama architecture, which llama.cpp runs the same way
 * apart from Qwen2's attention biases).
 */
import type { GgmlTensorTypeName } from "../gguf/format.ts";

/** Dimensions and storage of a generated llama-architecture model. */
export interface ModelShape {
  readonly name: string;
  readonly layers: number;
  readonly width: number;
  readonly heads: number;
  readonly kvHeads: number;
  readonly ffn: number;
  /** Total vocabulary size; `undefined` keeps the natural size of the built vocabulary. */
  readonly vocabSize: number | undefined;
  readonly contextLength: number;
  readonly ropeTheta: number;
  readonly rmsEpsilon: number;
  /** Storage type of the 2-D weight matrices; norms stay F32. */
  readonly weightType: GgmlTensorTypeName;
  /** Tie the output projection to the token embedding (as Qwen2-0.5B and 1.5B do). */
  readonly tiedEmbeddings: boolean;
  /** Standard deviation of generated weights. */
  readonly weightStd: number;
  /** Standard deviation of the token embedding (drives how peaked the output distribution is). */
  readonly embeddingStd: number;
}

const qwen2Common = {
  vocabSize: 151_936,
  contextLength: 32_768,
  ropeTheta: 1_000_000,
  rmsEpsilon: 1e-6,
  weightType: "Q8_0",
  tiedEmbeddings: true,
  weightStd: 0.02,
  embeddingStd: 0.02,
} as const;

/** The shapes `decide make-model --shape` accepts. */
export const MODEL_SHAPES = {
  tiny: {
    name: "tiny",
    layers: 2,
    width: 64,
    heads: 4,
    kvHeads: 2,
    ffn: 192,
    vocabSize: undefined,
    contextLength: 4096,
    ropeTheta: 10_000,
    rmsEpsilon: 1e-5,
    weightType: "F32",
    tiedEmbeddings: false,
    weightStd: 0.08,
    embeddingStd: 0.3,
  },
  "qwen2-0.5b": {
    name: "qwen2-0.5b",
    layers: 24,
    width: 896,
    heads: 14,
    kvHeads: 2,
    ffn: 4864,
    ...qwen2Common,
  },
  "qwen2-1.5b": {
    name: "qwen2-1.5b",
    layers: 28,
    width: 1536,
    heads: 12,
    kvHeads: 2,
    ffn: 8960,
    ...qwen2Common,
  },
} as const satisfies Record<string, ModelShape>;

/** Name of a known shape. */
export type ModelShapeName = keyof typeof MODEL_SHAPES;

/** Whether `name` is a known shape. */
export function isModelShapeName(name: string): name is ModelShapeName {
  return Object.hasOwn(MODEL_SHAPES, name);
}
