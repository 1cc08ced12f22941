/**
 * `npm run bench:scorer`: the scorer against llama.cpp's own cost on one generated model (issue
 * 44's figures). Each numbered section is a module of test/bench/scorer/; this script loads the
 * model once, runs them in order, and prints the peak memory last.
 */
import { MODEL_SHAPES } from "../../endpoint/models/shapes.ts";
import { DecisionModel } from "../../endpoint/runtime/decision-model.ts";
import { PromptSequence } from "../../endpoint/scorer/prompt-sequence.ts";
import { DecisionScorer } from "../../endpoint/scorer/scorer.ts";
import { benchModelPath, fmt, loadLine, machineLine, modelBenchFlags } from "./bench-helpers.ts";
import type { ScorerBench } from "./scorer/bench-context.ts";
import { decisionAgainstPrefill, prefillThroughput } from "./scorer/decision-vs-prefill.ts";
import { interleavedPolicies } from "./scorer/interleaved-policies.ts";
import { itemsUnderOnePreamble, optionLikelihood } from "./scorer/policy-items.ts";
import { questionsOnOneState } from "./scorer/state-questions.ts";

const { shape: shapeName, threads, blocks } = modelBenchFlags({});

// The model answers "A" or "B" (as a model that answers the question puts a letter on top), so
// that the mass decision of section 2 takes the path real answers take; where the shape cannot
// (untied embeddings), the random model, and section 2 says which path its mass took.
const modelPath = await benchModelPath(shapeName, undefined, {
  answersWithLetters: MODEL_SHAPES[shapeName].tiedEmbeddings,
});
const loadStarted = performance.now();
const model = await DecisionModel.load({ modelPath, threads });
const loadMs = performance.now() - loadStarted;
const contextSize = 4096;
const scorer = await DecisionScorer.create(model, { contextSize });
// A second context with the same settings, for pure prefill without any readout.
const prefillContext = await model.model.createContext({
  contextSize,
  batchSize: 512,
  threads,
  flashAttention: false,
});
const bench: ScorerBench = {
  model,
  scorer,
  prefill: new PromptSequence(prefillContext.getSequence()),
  contextSize,
  blocks,
};

console.log(`\n# scorer benchmark: ${shapeName}, ${threads} threads, ${blocks} blocks`);
console.log(machineLine());
console.log(
  `model load (check + hash + llama.cpp load): ${fmt(loadMs)}, file ${(model.sizeBytes / 2 ** 20).toFixed(0)} MiB`,
);

await prefillThroughput(bench);
await decisionAgainstPrefill(bench);
await questionsOnOneState(bench);
await itemsUnderOnePreamble(bench);
await optionLikelihood(bench);
await interleavedPolicies(bench);

const peak = process.resourceUsage().maxRSS / 2 ** 20;
console.log(`\n7. peak memory (max RSS): ${peak.toFixed(2)} GiB (${loadLine()})`);

await prefillContext.dispose();
await scorer.dispose();
await model.dispose();
