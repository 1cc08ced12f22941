/**
 * Where a decision's time goes beyond a pure prefill, and whether interleaved policies on prefix
 * slots keep the single-policy rate, measured in process CPU time so that the figures hold on a
 * shared, loaded machine (wall time there mostly measures the other tenants; run with
 * `--threads 1`, where llama.cpp has no threads spinning at a barrier and CPU time is the work).
 *
 * node --expose-gc --import tsx test/bench/scorer-readout.bench.ts [--threads 1] [--blocks 3] [--items 15]
 */
import type { Token } from "node-llama-cpp";
import { DecisionModel } from "../../endpoint/runtime/decision-model.ts";
import { buildDecisionPrompt } from "../../endpoint/scorer/prompt.ts";
import { PromptSequence } from "../../endpoint/scorer/prompt-sequence.ts";
import { DecisionScorer } from "../../endpoint/scorer/scorer.ts";
import { type DecisionInput, decisionRequest, type KeyedQuestion } from "../helpers/decision-requests.ts";
import {
  benchModelPath,
  loadLine,
  machineLine,
  median,
  modelBenchFlags,
  TEAM_QUESTION,
  words,
} from "./bench-helpers.ts";

const { shape, threads, blocks, values } = modelBenchFlags({ items: { type: "string", default: "15" } });
const itemCount = Number(values.items);
const gc = (globalThis as { gc?: () => void }).gc ?? (() => undefined);

/** Wall and process CPU milliseconds (all threads) of one call, garbage collected first. */
async function cpuTimed(fn: () => Promise<unknown>): Promise<{ wall: number; cpu: number }> {
  gc();
  const cpu0 = process.cpuUsage();
  const wall0 = performance.now();
  await fn();
  const cpu = process.cpuUsage(cpu0);
  return { wall: performance.now() - wall0, cpu: (cpu.user + cpu.system) / 1000 };
}

const model = await DecisionModel.load({ modelPath: await benchModelPath(shape), threads });
console.log(`\n# scorer readout benchmark: ${shape}, ${threads} threads, ${blocks} blocks, CPU time`);
console.log(machineLine());

// 1. One 4-option decision against the prefill of the same tokens, with and without an output row,
// all on the scorer's own prefix slot (one context, so nothing but the readout differs).
{
  const scorer = await DecisionScorer.create(model, { contextSize: 4096 });
  // A second context of the same settings, as bench:scorer's pure prefill uses.
  const other = await model.model.createContext({ contextSize: 4096, batchSize: 512, threads });
  const otherSequence = new PromptSequence(other.getSequence());
  const promptOf = (n: number) =>
    buildDecisionPrompt(
      words(n),
      { instructions: TEAM_QUESTION.instructions, options: TEAM_QUESTION.options! },
      "state-first",
      "letters",
    );
  let stateWords = 1;
  while (scorer.promptTokens(promptOf(stateWords)).length < 200) stateWords++;
  const tokens: Token[] = scorer.promptTokens(promptOf(stateWords));
  const input = (tokenMass: boolean): DecisionInput => ({
    state: words(stateWords),
    questions: [TEAM_QUESTION],
    tokenMass,
  });
  const onSlot = (outputRow: boolean) => () =>
    scorer.withSequence(tokens, async (sequence) => {
      await sequence.clear();
      return cpuTimed(() => sequence.prefill(tokens, outputRow));
    });
  const variants = {
    "pure prefill (no output row)": onSlot(false),
    "prefill + one output row (greedy token)": onSlot(true),
    "same, on a second context": () => cpuTimed(() => otherSequence.prefill(tokens, true)),
    "decision, letters-only readout": () =>
      cpuTimed(() => scorer.score(decisionRequest(input(false)), { reuse: false })),
    "decision, with allowed-token mass": () =>
      cpuTimed(() => scorer.score(decisionRequest(input(true)), { reuse: false })),
  };
  const cpu = new Map<string, number[]>();
  await scorer.score(decisionRequest(input(true)), { reuse: false }); // warm-up
  for (let b = 0; b < blocks; b++) {
    for (const [name, run] of Object.entries(variants))
      cpu.set(name, [...(cpu.get(name) ?? []), (await run()).cpu]);
  }
  const base = median(cpu.get("pure prefill (no output row)")!);
  const withRow = median(cpu.get("prefill + one output row (greedy token)")!);
  console.log(
    `\n1. ${tokens.length}-token decision, CPU ms (medians of ${blocks} interleaved; ${loadLine()}):`,
  );
  for (const [name, values] of cpu) {
    const ms = median(values);
    console.log(
      `   ${name}: ${ms.toFixed(0)} ms, ${(ms / base).toFixed(3)} of pure prefill, ${(ms / withRow).toFixed(3)} of prefill + output row (${values.map((v) => v.toFixed(0)).join(", ")})`,
    );
  }
  await other.dispose();
  await scorer.dispose();
}

// 2. Items of 3 interleaved policies on 3 slots against the same items under one policy.
{
  const policies = [0, 1, 2].map(
    (p): KeyedQuestion => ({
      ...TEAM_QUESTION,
      key: `p${p}`,
      instructions: `Policy ${p}: ${words(230, p * 101 + 11)}`,
    }),
  );
  const items = Array.from({ length: itemCount }, (_, i) => words(55, i * 3 + 2));
  const ask = (state: string, question: KeyedQuestion) =>
    decisionRequest({ state, questions: [question], layout: "policy-first", tokenMass: false });
  const run = async (slots: number, questionOf: (i: number) => KeyedQuestion, warm: readonly number[]) => {
    const scorer = await DecisionScorer.create(model, { contextSize: 2048, prefixSlots: slots });
    for (const i of warm) await scorer.score(ask("warm", questionOf(i)));
    const before = scorer.cacheStats;
    const { cpu } = await cpuTimed(async () => {
      for (const [i, state] of items.entries()) await scorer.score(ask(state, questionOf(i)));
    });
    const after = scorer.cacheStats;
    await scorer.dispose();
    return { cpu, misses: after.misses - before.misses };
  };
  console.log(
    `\n2. ${items.length} items of about 60 tokens under 300-token preambles, CPU ms (${loadLine()}):`,
  );
  const single = await run(1, () => policies[0]!, [0]);
  const warm = await run(3, (i) => policies[i % 3]!, [0, 1, 2]);
  const cold = await run(3, (i) => policies[i % 3]!, [0]);
  console.log(`   one policy, 1 slot: ${single.cpu.toFixed(0)} ms (timed misses ${single.misses})`);
  for (const [name, r] of [
    ["3 policies, 3 slots, each preamble seen before the clock", warm],
    ["3 policies, 3 slots, only policy 1 seen before (two cold preambles timed)", cold],
  ] as const) {
    console.log(
      `   ${name}: ${r.cpu.toFixed(0)} ms (timed misses ${r.misses}): ${(single.cpu / r.cpu).toFixed(2)}x of the single-policy rate`,
    );
  }
}

await model.dispose();
