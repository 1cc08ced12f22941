/**
 * Fitting the demo model's word evidence: the features of a text, the labelled examples, and a
 * softmax regression whose weights become the embeddings written by endpoint/models/demo.ts. The
 * weights are kept such that each policy's own question and option words add up to no evidence:
 * an item is decided by its own words, and an item of unknown words stays unsure.
 */
import { readFile } from "node:fs/promises";
import { buildDecisionPrompt } from "../scorer/prompt.ts";
import { chatText } from "./chat-template.ts";

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

/** Option letters A..P: how many evidence values each feature has. */
export const LETTERS = 16;
/** Typical prompt length the mean attention divides by. */
export const TYPICAL_PROMPT_TOKENS = 250;

/** Features that are not words: an empty JSON string or list (a missing field), and any digit. */
export const STRUCTURE_FEATURES = { emptyString: '""', emptyList: "[]", digit: "<digit>" } as const;

/**
 * The features of a text as the demo model sees them: every word, in lower case, that starts
 * after a space or a quote or at the start of the text (where the vocabulary's word pieces carry
 * evidence: each known word in lower, Capitalized and UPPER case, endpoint/models/demo-pieces.ts),
 * plus empty JSON values and digits. A word after other punctuation or a line break counts
 * nowhere, as its letters are the same pieces as the middle of an unknown word.
 */
export function wordsOf(text: string): string[] {
  const words = text.toLowerCase().match(/(?<=^|[ "])[a-z][a-z0-9']*/g) ?? [];
  const empties = (text.match(/""/g) ?? []).map(() => STRUCTURE_FEATURES.emptyString);
  const lists = (text.match(/\[\]/g) ?? []).map(() => STRUCTURE_FEATURES.emptyList);
  const digits = (text.match(/[0-9]/g) ?? []).map(() => STRUCTURE_FEATURES.digit);
  return [...words, ...empties, ...lists, ...digits];
}

/**
 * About how many tokens the whole prompt of an example has: one per word or digit or punctuation
 * mark (known words are single tokens), plus the chat template's special tokens and line breaks.
 */
function estimatedPromptTokens(example: DemoExample): number {
  const pieces = (text: string) => text.match(/[A-Za-z][A-Za-z']*|[0-9]|[^\sA-Za-z0-9]/g)?.length ?? 0;
  return pieces(example.text) + pieces(example.preamble) + 12;
}

/** A policy's preamble as sparse scaled counts: what its prompt holds before any item word. */
interface Intercept {
  readonly options: number;
  readonly features: readonly number[];
  readonly values: readonly number[];
}

/**
 * The projection of the weights onto those for which every policy's preamble sums to zero
 * evidence for each of its letters: the least change (per letter, a combination of the preamble
 * count vectors of the policies that have that letter) that solves the small Gram system, whose
 * matrices are computed once for the fit. Without it, the
 * question and option words act as a per-policy intercept that decides items whose words the
 * model does not know (every unfamiliar "allow" post read as "remove").
 */
function interceptProjection(intercepts: readonly Intercept[]): (weights: Float64Array) => void {
  const dot = (a: Intercept, b: Intercept) => {
    const bv = new Map(b.features.map((f, j) => [f, b.values[j]!]));
    return a.features.reduce((sum, f, j) => sum + a.values[j]! * (bv.get(f) ?? 0), 0);
  };
  // Which policies have each letter, and their Gram matrix: fixed for the whole fit.
  const letters = Array.from({ length: LETTERS }, (_, k) => {
    const rows = intercepts.filter((p) => p.options > k);
    return { k, rows, gram: rows.map((a) => rows.map((b) => dot(a, b))) };
  }).filter(({ rows }) => rows.length > 0);
  return (weights) => {
    for (const { k, rows, gram } of letters) {
      const bias = rows.map((p) =>
        p.features.reduce((sum, f, j) => sum + p.values[j]! * weights[f * LETTERS + k]!, 0),
      );
      const lambda = solve(gram, bias);
      rows.forEach((p, r) => {
        p.features.forEach((f, j) => {
          weights[f * LETTERS + k]! -= lambda[r]! * p.values[j]!;
        });
      });
    }
  };
}

/** Solves a small dense system by Gaussian elimination with partial pivoting. */
function solve(matrix: readonly (readonly number[])[], rhs: readonly number[]): number[] {
  const n = rhs.length;
  const a = matrix.map((row, i) => [...row, rhs[i]!]);
  for (let c = 0; c < n; c++) {
    const pivot = a
      .slice(c)
      .reduce((best, row, i) => (Math.abs(row[c]!) > Math.abs(a[best]![c]!) ? c + i : best), c);
    [a[c], a[pivot]] = [a[pivot]!, a[c]!];
    for (let r = 0; r < n; r++) {
      if (r === c) continue;
      const factor = a[r]![c]! / a[c]![c]!;
      for (let j = c; j <= n; j++) a[r]![j]! -= factor * a[c]![j]!;
    }
  }
  return a.map((row, i) => row[n]! / row[i]!);
}

/**
 * Fits per-feature letter evidence by softmax regression (full-batch gradient descent with L2,
 * each step projected so that every policy's preamble sums to zero evidence; `zeroIntercepts:
 * false` turns that off, for comparison). Weights live in one
 * flat array (feature × letter) and each example is a sparse list of (feature, value) pairs, so
 * 3,000 epochs over the training set take a second or two.
 */
export function fitEvidence(
  examples: readonly DemoExample[],
  { epochs = 3000, rate = 0.5, l2 = 0.0003, zeroIntercepts = true } = {},
): Map<string, Float64Array> {
  const index = new Map<string, number>();
  const featureOf = (w: string) => {
    if (!index.has(w)) index.set(w, index.size);
    return index.get(w)!;
  };
  const rows = examples.map((e) => {
    // The model averages over every token of the prompt, so a word weighs less in a long prompt:
    // fit on counts scaled the same way (relative to a typical prompt) rather than raw counts.
    const scale = TYPICAL_PROMPT_TOKENS / estimatedPromptTokens(e);
    const counts = new Map<number, number>();
    for (const w of [...wordsOf(e.text), ...wordsOf(e.preamble)]) {
      const f = featureOf(w);
      counts.set(f, (counts.get(f) ?? 0) + scale);
    }
    return { features: Int32Array.from(counts.keys()), values: Float64Array.from(counts.values()) };
  });
  // What a policy's prompt says before any item word: its preamble's evidence at an empty item.
  const intercepts = [...new Map(examples.map((e) => [e.preamble, e])).values()].map((e) => {
    const scale = TYPICAL_PROMPT_TOKENS / estimatedPromptTokens({ ...e, text: "" });
    const counts = new Map<number, number>();
    for (const w of wordsOf(e.preamble)) counts.set(featureOf(w), (counts.get(featureOf(w)) ?? 0) + scale);
    return { options: e.options, features: [...counts.keys()], values: [...counts.values()] };
  });
  const projectIntercepts = zeroIntercepts ? interceptProjection(intercepts) : undefined;
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
    projectIntercepts?.(weights);
  }
  const evidence = new Map<string, Float64Array>();
  for (const [feature, f] of index) evidence.set(feature, weights.slice(f * LETTERS, (f + 1) * LETTERS));
  return evidence;
}

/** The options of a policy a training row names, as the fit reads them. */
type PolicyOptions = (
  id: string,
) => { question: string; options: readonly { id: string; description: string }[] } | undefined;

/** Training examples from a JSONL of `{policy, label, state}` and the policies' options. */
export async function loadDemoExamples(path: string, policies: PolicyOptions): Promise<DemoExample[]> {
  const lines = (await readFile(path, "utf8")).split("\n").filter((l) => l.trim());
  return demoExamples(
    lines.map((line) => JSON.parse(line) as { policy: string; label: string; state: unknown }),
    policies,
    path,
  );
}

/** Training examples from rows of `{policy, label, state}`; `source` names them in an error. */
export function demoExamples(
  rows: readonly { policy: string; label: string; state: unknown }[],
  policies: PolicyOptions,
  source: string,
): DemoExample[] {
  return rows.map((row, i) => {
    const policy = policies(row.policy);
    const letter = policy?.options.findIndex((o) => o.id === row.label) ?? -1;
    if (!policy || letter < 0) throw new Error(`${source} line ${i + 1}: unknown policy or label`);
    return {
      text: ` ${typeof row.state === "string" ? row.state : JSON.stringify(row.state)}`,
      letter,
      options: policy.options.length,
      preamble: promptScaffold(policy),
    };
  });
}

/** A placeholder for the item, cut out of the rendered prompt. */
const ITEM_PLACEHOLDER = JSON.stringify("@item@");

/**
 * Everything a policy's prompt holds apart from the item, rendered by the scorer's own prompt
 * builder: the system instruction, the JSON keys, the option letters and descriptions, the
 * question, and the chat template's role names, as the model reads them (the ChatML text). All of
 * it is in every prompt of the policy, so all of it must be in the preamble whose evidence the
 * fit keeps at zero.
 */
export function promptScaffold(policy: {
  question: string;
  options: readonly { id: string; description: string }[];
}): string {
  const prompt = buildDecisionPrompt(
    "@item@",
    { instructions: policy.question, options: policy.options },
    "state-first",
    "letters",
  );
  return chatText(prompt.system, prompt.user.replace(ITEM_PLACEHOLDER, ""));
}
