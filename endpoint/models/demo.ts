/**
 * The `demo` model: a real llama-architecture GGUF whose weights are computed, not trained as a
 * language model, so that it behaves like a bag-of-words classifier for the sample policies. It is
 * a demo, not a language model: it only reads which known words the prompt holds.
 *
 * How: one layer; zero query and key weights give uniform attention, so the answer position
 * receives the mean of every token's embedding; each known word's embedding carries "evidence"
 * for the option letters A..P (fitted by softmax regression on labelled items in
 * events/items/demo-training.jsonl, generated from events/items/demo-templates.json); the output
 * layer maps that evidence to the letter tokens. Words count in any case and position, unknown
 * words through their longest known prefix.
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

/** Features that are not words: an empty JSON string or list (a missing field), and any digit. */
export const STRUCTURE_FEATURES = { emptyString: '""', emptyList: "[]", digit: "<digit>" } as const;

/**
 * The features of a text as the demo model sees them: every word in lower case wherever it
 * stands (after a space, a quote or a bracket; the vocabulary holds each known word in lower,
 * Capitalized and UPPER case, with and without the space marker, all carrying the same
 * evidence), plus empty JSON values and digits.
 */
export function wordsOf(text: string): string[] {
  const words = text.toLowerCase().match(/[a-z][a-z0-9']*/g) ?? [];
  const empties = (text.match(/""/g) ?? []).map(() => STRUCTURE_FEATURES.emptyString);
  const lists = (text.match(/\[\]/g) ?? []).map(() => STRUCTURE_FEATURES.emptyList);
  const digits = (text.match(/[0-9]/g) ?? []).map(() => STRUCTURE_FEATURES.digit);
  return [...words, ...empties, ...lists, ...digits];
}

/**
 * About how many tokens the whole prompt of an example has: one per word or digit or punctuation
 * mark (known words are single tokens), plus the chat template and the JSON keys and letters.
 */
function estimatedPromptTokens(example: DemoExample): number {
  const pieces = (text: string) => text.match(/[A-Za-z][A-Za-z']*|[0-9]|[^\sA-Za-z0-9]/g)?.length ?? 0;
  return pieces(example.text) + pieces(example.preamble) + 30 + 6 * example.options;
}

/** Shortest prefix that counts as a stem of a known word. */
const MIN_STEM = 4;

/** Mean evidence of the known words under each prefix of at least {@link MIN_STEM} letters. */
function stemEvidence(evidence: ReadonlyMap<string, Float64Array>): Map<string, Float64Array> {
  const sums = new Map<string, { sum: Float64Array; count: number }>();
  for (const [word, v] of evidence) {
    if (!/^[a-z]/.test(word)) continue;
    for (let end = MIN_STEM; end < word.length; end++) {
      const stem = word.slice(0, end);
      const entry = sums.get(stem) ?? { sum: new Float64Array(LETTERS), count: 0 };
      for (let k = 0; k < LETTERS; k++) entry.sum[k] = (entry.sum[k] ?? 0) + (v[k] ?? 0);
      entry.count++;
      sums.set(stem, entry);
    }
  }
  return new Map([...sums].map(([stem, { sum, count }]) => [stem, sum.map((x) => x / count)]));
}

/** The pieces of the vocabulary that carry a feature's evidence. */
function piecesOf(feature: string): string[] {
  if (feature === STRUCTURE_FEATURES.digit) return "0123456789".split("");
  if (feature === STRUCTURE_FEATURES.emptyString || feature === STRUCTURE_FEATURES.emptyList)
    return [feature];
  const forms = [feature, feature[0]!.toUpperCase() + feature.slice(1), feature.toUpperCase()];
  return [...new Set(forms.flatMap((form) => [form, `${SPACE_MARKER}${form}`]))];
}

/**
 * Fits per-feature letter evidence by softmax regression (full-batch gradient descent with L2).
 * Weights live in one flat array (feature × letter) and each example is a sparse list of
 * (feature, value) pairs, so 3,000 epochs over the training set take a second or two.
 */
export function fitEvidence(
  examples: readonly DemoExample[],
  { epochs = 3000, rate = 0.5, l2 = 0.0003 } = {},
): Map<string, Float64Array> {
  const index = new Map<string, number>();
  const rows = examples.map((e) => {
    // The model averages over every token of the prompt, so a word weighs less in a long prompt:
    // fit on counts scaled the same way (relative to a typical prompt) rather than raw counts.
    const scale = TYPICAL_PROMPT_TOKENS / estimatedPromptTokens(e);
    const counts = new Map<number, number>();
    for (const w of [...wordsOf(e.text), ...wordsOf(e.preamble)]) {
      if (!index.has(w)) index.set(w, index.size);
      const f = index.get(w)!;
      counts.set(f, (counts.get(f) ?? 0) + scale);
    }
    return { features: Int32Array.from(counts.keys()), values: Float64Array.from(counts.values()) };
  });
  const weights = new Float64Array(index.size * LETTERS);
  const gradient = new Float64Array(weights.length);
  const logits = new Float64Array(LETTERS);
  for (let epoch = 0; epoch < epochs; epoch++) {
    gradient.fill(0);
    examples.forEach((example, i) => {
      const { features, values } = rows[i]!;
      const n = example.options;
      logits.fill(0);
      for (let j = 0; j < features.length; j++)
        for (let k = 0; k < n; k++) logits[k]! += values[j]! * weights[features[j]! * LETTERS + k]!;
      let max = -Infinity;
      for (let k = 0; k < n; k++) max = Math.max(max, logits[k]!);
      let sum = 0;
      for (let k = 0; k < n; k++) sum += logits[k] = Math.exp(logits[k]! - max);
      for (let k = 0; k < n; k++) logits[k] = logits[k]! / sum - (k === example.letter ? 1 : 0);
      for (let j = 0; j < features.length; j++)
        for (let k = 0; k < n; k++) gradient[features[j]! * LETTERS + k]! += values[j]! * logits[k]!;
    });
    for (let w = 0; w < weights.length; w++)
      weights[w]! -= rate * (gradient[w]! / examples.length + l2 * weights[w]!);
  }
  const evidence = new Map<string, Float64Array>();
  for (const [feature, f] of index) evidence.set(feature, weights.slice(f * LETTERS, (f + 1) * LETTERS));
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
 * Writes the demo model for `examples` to `out`. `gain` scales the fitted evidence (1 reproduces
 * the fitted classifier): 0.25 was chosen on events/items/demo-dev.jsonl and demo-dev2.jsonl as the value that
 * automates fewest wrong items while clear sample items stay above 0.9 (README: figures).
 */
export async function writeDemoModel(
  out: string,
  examples: readonly DemoExample[],
  gain = 0.25,
  fit: Parameters<typeof fitEvidence>[1] = {},
): Promise<{ words: number; bytes: number }> {
  const evidence = fitEvidence(examples, fit);
  const shape = demoShape();
  const words = [...evidence.keys()].filter((feature) => /^[a-z]/.test(feature));
  const vocabulary = buildVocabulary({
    extraWords: words,
    wordForms: words,
    extraPieces: [STRUCTURE_FEATURES.emptyString, STRUCTURE_FEATURES.emptyList],
  });
  const vocab = vocabulary.tokens.length;
  const ids = new Map(vocabulary.tokens.map((piece, id) => [piece, id]));
  const embeddings = new Float32Array(WIDTH * vocab);
  const output = new Float32Array(WIDTH * vocab);
  const letterIds = "ABCDEFGHIJKLMNOP".split("").map((l) => ids.get(l)!);
  for (let t = 0; t < vocab; t++) embeddings[t * WIDTH + CARRIER] = 1;
  const assigned = new Set<number>();
  const setEvidence = (t: number, v: Float64Array) => {
    assigned.add(t);
    for (let k = 0; k < LETTERS; k++) embeddings[t * WIDTH + k] = EVIDENCE_SCALE * v[k]!;
  };
  for (const [feature, v] of evidence) {
    for (const piece of piecesOf(feature)) {
      const t = ids.get(piece);
      if (t !== undefined) setEvidence(t, v);
    }
  }
  // An unknown word such as "crashing" tokenizes as its longest known prefix ("▁crash", a piece
  // because "crashes" is known) and a few letters: give such prefixes the mean evidence of the
  // known words they start, a crude stemmer that needs no tokenizer at fitting time.
  for (const [stem, v] of stemEvidence(evidence)) {
    for (const piece of piecesOf(stem)) {
      const t = ids.get(piece);
      if (t !== undefined && !assigned.has(t)) setEvidence(t, v);
    }
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
