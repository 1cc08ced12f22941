/**
 * The `demo` model: a real llama-architecture GGUF whose weights are computed, not trained as a
 * language model, so that it behaves like a bag-of-words classifier for the sample policies. It is
 * a demo, not a language model: it only reads which known words the prompt holds.
 *
 * How: one layer; zero query and key weights give uniform attention, so the answer position
 * receives the mean of every token's embedding; each known word's embedding carries "evidence"
 * for the option letters A..P (fitted by softmax regression on labelled items in
 * events/items/demo-training.jsonl); the output layer maps that evidence to the letter tokens.
 */
import { readFile } from "node:fs/promises";
import { encodeTensor } from "../gguf/quantize.ts";
import { type GgufTensorSpec, writeGgufFile } from "../gguf/writer.ts";
import { LETTER_INSTRUCTION } from "../scorer/prompt.ts";
import type { ModelShape } from "./shapes.ts";
import { modelMetadata } from "./synthesize.ts";
import { buildVocabulary, SPACE_MARKER } from "./vocabulary.ts";

/** One labelled training item: its words and the index of its option (its letter). */
export interface DemoExample {
  readonly text: string;
  /** Option index of the label (A = 0). */
  readonly letter: number;
  /** Options of its policy: the softmax runs over these letters only. */
  readonly options: number;
  /** Words of the policy's question and options, present in every prompt of that policy. */
  readonly preamble: string;
}

const WIDTH = 32;
const LETTERS = 16;
const CARRIER = LETTERS; // dimension holding a constant 1 in every embedding
/** Evidence scale inside embeddings: small, so RMS normalization stays close to linear. */
const EVIDENCE_SCALE = 0.05;
/** Typical prompt length the mean attention divides by. */
const TYPICAL_PROMPT_TOKENS = 250;

/**
 * The lowercase words of a text, as the generated vocabulary sees them: its word pieces are
 * lowercase, so a capitalized word ("Billing") is spelled letter by letter and carries no evidence.
 */
export function wordsOf(text: string): string[] {
  // Only words after a space: those are the "▁word" pieces; a word glued to a quote or spelled
  // out letter by letter never reaches its piece.
  return text.match(/(?<=\s)[a-z][a-z0-9']*(?![A-Za-z0-9])/g) ?? [];
}

/** Fits per-word letter evidence by softmax regression (gradient descent with L2). */
export function fitEvidence(
  examples: readonly DemoExample[],
  { epochs = 400, rate = 0.5, l2 = 0.001 } = {},
): Map<string, Float64Array> {
  const evidence = new Map<string, Float64Array>();
  const vector = (word: string) => {
    let v = evidence.get(word);
    if (!v) {
      v = new Float64Array(LETTERS);
      evidence.set(word, v);
    }
    return v;
  };
  const features = examples.map((e) => {
    const counts = new Map<string, number>();
    for (const w of [...wordsOf(e.text), ...wordsOf(e.preamble)]) counts.set(w, (counts.get(w) ?? 0) + 1);
    for (const w of counts.keys()) vector(w);
    return counts;
  });
  for (let epoch = 0; epoch < epochs; epoch++) {
    const gradients = new Map<string, Float64Array>();
    examples.forEach((example, i) => {
      const logits = new Float64Array(example.options);
      for (const [w, c] of features[i]!)
        for (let k = 0; k < example.options; k++) logits[k]! += c * evidence.get(w)![k]!;
      const max = Math.max(...logits);
      const exp = logits.map((l) => Math.exp(l - max));
      const sum = exp.reduce((a, b) => a + b, 0);
      for (const [w, c] of features[i]!) {
        let g = gradients.get(w);
        if (!g) {
          g = new Float64Array(LETTERS);
          gradients.set(w, g);
        }
        for (let k = 0; k < example.options; k++)
          g[k]! += c * (exp[k]! / sum - (k === example.letter ? 1 : 0));
      }
    });
    for (const [w, g] of gradients) {
      const v = evidence.get(w)!;
      for (let k = 0; k < LETTERS; k++) v[k]! -= rate * (g[k]! / examples.length + l2 * v[k]!);
    }
  }
  return evidence;
}

/** The model's dimensions (one layer, width 32). */
export function demoShape(): ModelShape {
  return {
    name: "demo",
    layers: 1,
    width: WIDTH,
    heads: 1,
    kvHeads: 1,
    ffn: 32,
    vocabSize: undefined,
    contextLength: 4096,
    ropeTheta: 10_000,
    rmsEpsilon: 1e-6,
    weightType: "F32",
    tiedEmbeddings: false,
    weightStd: 0,
    embeddingStd: 0,
  };
}

/**
 * Writes the demo model for `examples` to `out`. `gain` scales the evidence: 0.2 makes clear
 * sample items about 0.9 to 0.98 sure and mixed ones about 0.7 to 0.8, so some are escalated.
 */
export async function writeDemoModel(
  out: string,
  examples: readonly DemoExample[],
  gain = 0.2,
): Promise<{ words: number; bytes: number }> {
  const evidence = fitEvidence(examples);
  const shape = demoShape();
  const vocabulary = buildVocabulary({ extraWords: [...evidence.keys()] });
  const vocab = vocabulary.tokens.length;
  const embeddings = new Float32Array(WIDTH * vocab);
  const output = new Float32Array(WIDTH * vocab);
  const letterIds = "ABCDEFGHIJKLMNOP".split("").map((l) => vocabulary.tokens.indexOf(l));
  for (let t = 0; t < vocab; t++) embeddings[t * WIDTH + CARRIER] = 1;
  for (const [word, v] of evidence) {
    const t = vocabulary.tokens.indexOf(`${SPACE_MARKER}${word}`);
    if (t < 0) continue;
    for (let k = 0; k < LETTERS; k++) embeddings[t * WIDTH + k] = EVIDENCE_SCALE * v[k]!;
  }
  // logit(letter k) = beta · evidence_k + a constant that lifts the letters above other tokens.
  const beta = (gain * TYPICAL_PROMPT_TOKENS) / (WIDTH * EVIDENCE_SCALE);
  letterIds.forEach((t, k) => {
    output[t * WIDTH + k] = beta;
    output[t * WIDTH + CARRIER] = 2;
  });
  const zeros = (n: number) => new Float32Array(n);
  const identity = zeros(WIDTH * WIDTH);
  const passEvidence = zeros(WIDTH * WIDTH);
  for (let d = 0; d < WIDTH; d++) identity[d * WIDTH + d] = 1;
  for (let d = 0; d < LETTERS; d++) passEvidence[d * WIDTH + d] = 1;
  const tensor = (name: string, dims: number[], values: Float32Array): GgufTensorSpec => ({
    name,
    dims,
    type: "F32",
    chunks: () => [encodeTensor("F32", values)],
  });
  const ones = new Float32Array(WIDTH).fill(1);
  const tensors = [
    tensor("token_embd.weight", [WIDTH, vocab], embeddings),
    tensor("blk.0.attn_norm.weight", [WIDTH], ones),
    // Zero queries and keys: every position attends equally to all earlier ones.
    tensor("blk.0.attn_q.weight", [WIDTH, WIDTH], zeros(WIDTH * WIDTH)),
    tensor("blk.0.attn_k.weight", [WIDTH, WIDTH], zeros(WIDTH * WIDTH)),
    tensor("blk.0.attn_v.weight", [WIDTH, WIDTH], identity),
    tensor("blk.0.attn_output.weight", [WIDTH, WIDTH], passEvidence),
    tensor("blk.0.ffn_norm.weight", [WIDTH], ones),
    tensor("blk.0.ffn_gate.weight", [WIDTH, shape.ffn], zeros(WIDTH * shape.ffn)),
    tensor("blk.0.ffn_up.weight", [WIDTH, shape.ffn], zeros(WIDTH * shape.ffn)),
    tensor("blk.0.ffn_down.weight", [shape.ffn, WIDTH], zeros(WIDTH * shape.ffn)),
    tensor("output_norm.weight", [WIDTH], ones),
    tensor("output.weight", [WIDTH, vocab], output),
  ];
  const metadata = modelMetadata(shape, vocabulary, "F32");
  metadata.set("general.name", {
    kind: "string",
    value: "decision-pipeline demo (bag of words, not a language model)",
  });
  const bytes = await writeGgufFile(out, { metadata, tensors });
  return { words: evidence.size, bytes };
}

/** Training examples from a JSONL of `{policy, label, state}` and the policies' options. */
export async function loadDemoExamples(
  path: string,
  policies: (
    id: string,
  ) => { question: string; options: readonly { id: string; description: string }[] } | undefined,
): Promise<DemoExample[]> {
  const lines = (await readFile(path, "utf8")).split("\n").filter((l) => l.trim());
  return lines.map((line, i) => {
    const row = JSON.parse(line) as { policy: string; label: string; state: unknown };
    const policy = policies(row.policy);
    const letter = policy?.options.findIndex((o) => o.id === row.label) ?? -1;
    if (!policy || letter < 0) throw new Error(`${path} line ${i + 1}: unknown policy or label`);
    return {
      text: ` ${typeof row.state === "string" ? row.state : JSON.stringify(row.state)}`,
      letter,
      options: policy.options.length,
      // Everything else the prompt holds: the system instruction, the question and the options.
      preamble: ` ${LETTER_INSTRUCTION} ${policy.question} ${policy.options.map((o) => o.description).join(" ")}`,
    };
  });
}
