/**
 * Whether scoring several items of one policy together pays: their suffixes after the shared
 * preamble evaluated in one llama.cpp batch across sequences (several LlamaContextSequence of one
 * context evaluated concurrently, which node-llama-cpp batches into one decode), against the same
 * items one by one on one sequence with prefix reuse (the scorer today). Each item's letter
 * probabilities are compared bit for bit with the one-by-one result, and the work is measured in
 * process CPU time, interleaved A/B, so that the figures hold on a shared, loaded machine.
 *
 * node --expose-gc --import tsx test/bench/scorer-batch.bench.ts [--threads 1] [--blocks 3] [--group 8] [--groups 2]
 */
import type { LlamaContext, Token } from "node-llama-cpp";
import { DecisionModel } from "../../endpoint/runtime/decision-model.ts";
import { checkLetterSlots, letterReadoutRequest } from "../../endpoint/scorer/letter-readout.ts";
import { buildDecisionPrompt } from "../../endpoint/scorer/prompt.ts";
import { type PromptEvaluation, PromptSequence } from "../../endpoint/scorer/prompt-sequence.ts";
import { DecisionScorer } from "../../endpoint/scorer/scorer.ts";
import {
  benchModelPath,
  loadLine,
  machineLine,
  median,
  modelBenchFlags,
  TEAM_QUESTION,
  words,
} from "./bench-helpers.ts";

const { shape, threads, blocks, values } = modelBenchFlags({
  group: { type: "string", default: "8" },
  groups: { type: "string", default: "2" },
  mass: { type: "string", default: "no" },
});
const groupSize = Number(values.group);
const groupCount = Number(values.groups);
const tokenMass = values.mass === "yes";
const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);

/** Process CPU milliseconds (all threads) and wall milliseconds of one call, garbage collected first. */
async function cpuTimed<T>(fn: () => Promise<T>): Promise<{ cpu: number; wall: number; value: T }> {
  gc();
  const cpu0 = process.cpuUsage();
  const wall0 = performance.now();
  const value = await fn();
  const cpu = process.cpuUsage(cpu0);
  return { cpu: (cpu.user + cpu.system) / 1000, wall: performance.now() - wall0, value };
}

const model = await DecisionModel.load({ modelPath: await benchModelPath(shape), threads });
const scorer = await DecisionScorer.create(model, { contextSize: 1024 });
const question = { instructions: `Policy: ${words(300, 17)}`, options: TEAM_QUESTION.options! };
const promptOf = (state: string) =>
  scorer.promptTokens(buildDecisionPrompt(state, question, "policy-first", "letters"));
// Items of 60 to 120 suffix tokens after the shared preamble, lengths spread evenly.
const preambleLength = promptOf("x").length - 15;
const items: Token[][] = [];
for (let i = 0; i < groupSize * groupCount; i++) {
  const target = 60 + Math.round((60 * i) / Math.max(1, groupSize * groupCount - 1));
  let n = Math.max(1, target - 30);
  while (promptOf(words(n, i * 37 + 5)).length - preambleLength < target) n++;
  items.push(promptOf(words(n, i * 37 + 5)));
}
const shared = items.reduce((len, t) => {
  let k = 0;
  while (k < len && t[k] === items[0]![k]) k++;
  return k;
}, items[0]!.length);
const preamble = items[0]!.slice(0, shared);
const probe = scorer.chatWrapper.generateContextState({
  chatHistory: [
    { type: "system", text: "probe" },
    { type: "user", text: "probe" },
    { type: "model", response: [] },
  ],
}).contextText;
const letters = checkLetterSlots(model.model, probe, shape).tokens.slice(0, question.options.length);
const readout = letterReadoutRequest(model.model, letters, tokenMass);

const makeContext = (sequences: number): Promise<LlamaContext> =>
  model.model.createContext({ contextSize: 1024, batchSize: 512, threads, flashAttention: false, sequences });
const single = await makeContext(1);
const oneSequence = new PromptSequence(single.getSequence());
const together = await makeContext(groupSize);
const many = Array.from({ length: groupSize }, () => new PromptSequence(together.getSequence()));

console.log(`\n# scoring an object's items together: ${shape}, ${threads} threads, CPU time`);
console.log(machineLine());
console.log(
  `${items.length} items in groups of ${groupSize}: ${preamble.length}-token shared preamble, suffixes ` +
    `${Math.min(...items.map((t) => t.length - shared))} to ${Math.max(...items.map((t) => t.length - shared))} tokens; readout ${tokenMass ? "full map (token mass)" : "letters only"}`,
);

// Priming: the preamble into each sequence (node-llama-cpp 3.21.1 exposes no llama_memory_seq_cp).
await oneSequence.evaluate(preamble, readout);
const primed = await cpuTimed(() => Promise.all(many.map((s) => s.evaluate(preamble, readout))));
const primeOne = await cpuTimed(() =>
  oneSequence.evaluate(preamble.slice(0, -1).concat(preamble.at(-1)!), readout),
);
console.log(
  `priming ${groupSize} sequences with the preamble together: ${primed.cpu.toFixed(0)} ms CPU (one sequence's re-evaluation of its last tokens: ${primeOne.cpu.toFixed(0)} ms)`,
);

const oneByOne = async (group: readonly Token[][]): Promise<PromptEvaluation[]> => {
  const out: PromptEvaluation[] = [];
  for (const tokens of group) out.push(await oneSequence.evaluate(tokens, readout));
  return out;
};
const inOneBatch = (group: readonly Token[][]): Promise<PromptEvaluation[]> =>
  Promise.all(group.map((tokens, i) => many[i]!.evaluate(tokens, readout)));

const cpu = { oneByOne: [] as number[], together: [] as number[] };
const wall = { oneByOne: [] as number[], together: [] as number[] };
let compared = 0;
let differing = 0;
let maxDiff = 0;
for (let b = 0; b < blocks; b++) {
  for (let g = 0; g < groupCount; g++) {
    const group = items.slice(g * groupSize, (g + 1) * groupSize);
    const order =
      (b + g) % 2 === 0 ? (["oneByOne", "together"] as const) : (["together", "oneByOne"] as const);
    const results: Record<string, PromptEvaluation[]> = {};
    for (const name of order) {
      // Every sequence back to the bare preamble, so that no run finds an item of an earlier block.
      for (const s of [oneSequence, ...many]) await s.truncate(preamble.length);
      const r = await cpuTimed(() => (name === "oneByOne" ? oneByOne(group) : inOneBatch(group)));
      cpu[name].push(r.cpu);
      wall[name].push(r.wall);
      results[name] = r.value;
    }
    for (const [i, reference] of results.oneByOne!.entries()) {
      const other = results.together![i]!;
      for (const token of letters) {
        compared++;
        const a = reference.probabilities.get(token) ?? 0;
        const c = other.probabilities.get(token) ?? 0;
        if (a !== c) differing++;
        maxDiff = Math.max(maxDiff, Math.abs(a - c));
      }
    }
  }
}
const perItem = (v: number[]) => median(v) / groupSize;
console.log(
  `\nper group of ${groupSize} items (medians of ${blocks * groupCount}, interleaved; ${loadLine()}):`,
);
for (const name of ["oneByOne", "together"] as const) {
  console.log(
    `   ${name === "oneByOne" ? "one by one, prefix reuse" : "together, one batch across sequences"}: ` +
      `${median(cpu[name]).toFixed(0)} ms CPU (${perItem(cpu[name]).toFixed(0)} per item), wall ${median(wall[name]).toFixed(0)} ms ` +
      `(${cpu[name].map((v) => v.toFixed(0)).join(", ")})`,
  );
}
console.log(
  `   items/s per instance, together / one by one: ${(median(cpu.oneByOne) / median(cpu.together)).toFixed(2)}x by CPU time, ` +
    `${(median(wall.oneByOne) / median(wall.together)).toFixed(2)}x by wall time`,
);
console.log(
  `   exactness: ${differing} of ${compared} letter probabilities differ (largest difference ${maxDiff})`,
);

await together.dispose();
await single.dispose();
await scorer.dispose();
await model.dispose();
