import type { Token } from "node-llama-cpp";
import { MODEL_SHAPES } from "../../endpoint/models/shapes.ts";
import { BASE_WORDS } from "../../endpoint/models/words.ts";
import { DecisionModel } from "../../endpoint/runtime/decision-model.ts";
import { keptLogitsState } from "../../endpoint/scorer/kept-logits.ts";
import { letterReadoutRequest, TOP_TOKEN_READOUT } from "../../endpoint/scorer/letter-readout.ts";
import { buildDecisionPrompt } from "../../endpoint/scorer/prompt.ts";
import { type NextTokenReadout, PromptSequence } from "../../endpoint/scorer/prompt-sequence.ts";
import { DecisionScorer } from "../../endpoint/scorer/scorer.ts";
import { type DecisionInput, decisionRequest, type KeyedQuestion } from "../helpers/decision-requests.ts";
import {
  benchModelPath,
  fmt,
  loadLine,
  machineLine,
  median,
  modelBenchFlags,
  TEAM_QUESTION,
  timed,
  words,
} from "./bench-helpers.ts";

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
const prefill = new PromptSequence(prefillContext.getSequence());

console.log(`\n# scorer benchmark: ${shapeName}, ${threads} threads, ${blocks} blocks`);
console.log(machineLine());
console.log(
  `model load (check + hash + llama.cpp load): ${fmt(loadMs)}, file ${(model.sizeBytes / 2 ** 20).toFixed(0)} MiB`,
);

/** Evaluates `tokens` from an empty cache with no readout: the pure prefill cost. */
async function pureprefill(tokens: readonly Token[]): Promise<number> {
  await prefill.clear();
  return timed(() => prefill.prefill(tokens, false));
}

/**
 * Evaluates `tokens` from an empty cache and reads the greedy next token after the last one: the
 * prefill plus the one row of logits that any readout needs. A pure prefill asks llama.cpp for no
 * output, so it skips the output projection (vocabulary x width, a 151,936 x 896 matrix-vector
 * product at this shape); every decision pays it once per question.
 */
async function prefillWithOutput(tokens: readonly Token[]): Promise<number> {
  await prefill.clear();
  return timed(() => prefill.prefill(tokens, true));
}

// 1. Prefill throughput.
{
  const tokens = scorer.promptTokens({ system: words(300), user: words(200, 3) }).slice(0, 512);
  await pureprefill(tokens); // warm-up
  const ms: number[] = [];
  for (let b = 0; b < blocks; b++) ms.push(await pureprefill(tokens));
  console.log(
    `\n1. prefill: ${tokens.length} tokens in ${fmt(median(ms))} = ${((tokens.length / median(ms)) * 1000).toFixed(0)} tokens/s (${loadLine()})`,
  );
}

// 2. One choice decision of about 200 tokens against a pure prefill of the same tokens.
const teamQuestion = TEAM_QUESTION;
{
  let stateWords = 1;
  const tokenCount = (n: number) => {
    const prompt = buildDecisionPrompt(
      words(n),
      { instructions: teamQuestion.instructions, options: teamQuestion.options! },
      "state-first",
      "letters",
    );
    return scorer.promptTokens(prompt);
  };
  while (tokenCount(stateWords).length < 200) stateWords++;
  const tokens = tokenCount(stateWords);
  const request = (tokenMass: boolean): DecisionInput => ({
    state: words(stateWords),
    questions: [teamQuestion],
    tokenMass,
  });
  await scorer.score(decisionRequest(request(true)), { reuse: false }); // warm-up
  const pre: number[] = [];
  const preOut: number[] = [];
  const lettersOnly: number[] = [];
  const withMass: number[] = [];
  const letters = scorer.letterTokens.slice(0, teamQuestion.options!.length);
  const variants: [number[], () => Promise<number>][] = [
    [pre, () => pureprefill(tokens)],
    [preOut, () => prefillWithOutput(tokens)],
    [lettersOnly, () => timed(() => scorer.score(decisionRequest(request(false)), { reuse: false }))],
    [withMass, () => timed(() => scorer.score(decisionRequest(request(true)), { reuse: false }))],
  ];
  // Each block runs the four in another order (rotated by one each block), so that none always
  // follows the same one (the pure prefill after the mass's 151,936-entry map, say).
  for (let b = 0; b < blocks * 2; b++)
    for (let k = 0; k < variants.length; k++) {
      const [into, run] = variants[(k + b) % variants.length]!;
      into.push(await run());
    }
  const p = median(pre);
  const po = median(preOut);
  // Each block times the four back to back, so the median of a block's own ratios is paired: a
  // drift in the machine's speed between blocks moves both sides of it. With 2 x blocks blocks
  // (6 by default) each variant takes each place in the order at least once.
  const paired = (ms: readonly number[]) => median(ms.map((m, b) => m / pre[b]!)).toFixed(3);
  const ratios = (ms: readonly number[]) =>
    `ratio ${(median(ms) / p).toFixed(3)} to pure prefill (paired by block ${paired(ms)}), ${(median(ms) / po).toFixed(3)} to prefill + output`;
  console.log(
    `\n2. one 4-option choice decision, ${tokens.length} prompt tokens (medians of ${pre.length} interleaved runs, order rotated each block; ${loadLine()}):`,
  );
  console.log(`   pure prefill (no output row) ${fmt(p)}`);
  console.log(
    `   prefill + one output row (greedy next token) ${fmt(po)}: the output row costs ${fmt(po - p)} (paired by block ${paired(preOut)})`,
  );
  console.log(`   decision, letters-only readout ${fmt(median(lettersOnly))}: ${ratios(lettersOnly)}`);
  const massAnswer = (await scorer.score(decisionRequest(request(true)), { reuse: false })).answers[0]!;
  const top = await scorer.withSequence(tokens, (sequence) => sequence.evaluate(tokens, TOP_TOKEN_READOUT));
  const path = letters.includes(top.token!)
    ? "a letter on top: the short path"
    : "no letter on top: the full-map path";
  console.log(
    `   decision, with allowed-token mass (${massAnswer.allowedTokenMass?.toExponential(2)}; ${path}) ${fmt(median(withMass))}: ${ratios(withMass)}`,
  );
  // What each readout costs on its own: read again from the logits the prompt's evaluation kept
  // (kept-logits.ts; trusted by the mass decisions above), so no evaluation is in the timing.
  const readouts: [string, NextTokenReadout][] = [
    ["the letters alone", letterReadoutRequest(model.model, letters, false)],
    ["the top token with its probability (the mass's first readout)", TOP_TOKEN_READOUT],
    ["the full map", letterReadoutRequest(model.model, letters, true)],
  ];
  const readoutMs = await scorer.withSequence(tokens, async (sequence) => {
    await sequence.evaluate(tokens, TOP_TOKEN_READOUT);
    const ms = readouts.map((): number[] => []);
    for (let round = 0; round < 5 * blocks; round++)
      for (const [i, [, readout]] of readouts.entries())
        ms[i]!.push(await timed(() => sequence.readAgain(tokens, readout)));
    return ms.map(median);
  });
  console.log(
    `   readouts on the kept logits alone (${keptLogitsState(model.model).state}): ${readouts.map(([name], i) => `${name} ${fmt(readoutMs[i]!)}`).join(", ")}`,
  );
}

// 3. 21 yes/no questions over one state of about 1,800 tokens: reused against fresh.
{
  const state = words(1600);
  const questions: KeyedQuestion[] = Array.from({ length: 21 }, (_, i) => ({
    key: `q${i}`,
    type: "noul",
    instructions: `Does the text mention ${BASE_WORDS[(i * 13) % BASE_WORDS.length]} or ${BASE_WORDS[(i * 17 + 5) % BASE_WORDS.length]}?`,
  }));
  const freshSubset = 3;
  await scorer.score(decisionRequest({ state: "warm", questions: [questions[0]!], tokenMass: false }), {
    reuse: false,
  });
  // A block is one reused run of the 21 (from an empty cache) and 3 fresh questions, back to back,
  // in an order that alternates by block: a fresh question costs about 8 s, and this machine's
  // speed drifts by 10 percent between minutes, so a ratio of two single samples taken apart moves
  // with the machine. Each block's ratio pairs two samples taken side by side; the median of the
  // blocks is the figure.
  const reusedRuns: number[] = [];
  const freshRuns: number[] = [];
  const firstQuestionMs: number[] = [];
  const reusedQuestion: { renderMs: number; evaluateMs: number; totalMs: number }[] = [];
  let reusedResult: Awaited<ReturnType<typeof scorer.score>> | undefined;
  const runReused = async () => {
    await scorer.clearCache();
    reusedRuns.push(
      await timed(async () => {
        reusedResult = await scorer.score(decisionRequest({ state, questions, tokenMass: false }));
      }),
    );
    firstQuestionMs.push(reusedResult!.answers[0]!.timings.totalMs);
    reusedQuestion.push(...reusedResult!.answers.slice(1).map((answer) => answer.timings));
  };
  const runFresh = async (b: number) => {
    // Another 3 of the 21 each block, none of them the reused run's first.
    const picked = Array.from(
      { length: freshSubset },
      (_, k) => questions[1 + ((b * freshSubset + k) % 20)]!,
    );
    freshRuns.push(
      await timed(() =>
        scorer.score(decisionRequest({ state, questions: picked, tokenMass: false }), { reuse: false }),
      ),
    );
  };
  for (let b = 0; b < blocks; b++) {
    if (b % 2 === 0) {
      await runReused();
      await runFresh(b);
    } else {
      await runFresh(b);
      await runReused();
    }
  }
  const scale = questions.length / freshSubset;
  const blockRatios = reusedRuns.map((reused, b) => (freshRuns[b]! * scale) / reused);
  // llama.cpp alone, on the bench's own context of the same settings: the same prompts evaluated
  // back to back with the same readout and nothing of the scorer's (no request, no rendering, no
  // tokenizing), the floor a reused question can reach.
  const request = decisionRequest({ state, questions, tokenMass: false });
  const prompts = request.questions.map((question) =>
    scorer.promptTokens(buildDecisionPrompt(request.state, question, request.layout, question.scoring)),
  );
  const readout = letterReadoutRequest(model.model, scorer.letterTokens.slice(0, 2), false);
  await prefill.clear();
  await prefill.evaluate(prompts[0]!, readout);
  const floorMs: number[] = [];
  let floorTokens = 0;
  for (const prompt of prompts.slice(1)) {
    floorMs.push(
      await timed(async () => {
        floorTokens = (await prefill.evaluate(prompt, readout)).evaluatedTokens;
      }),
    );
  }
  const promptTokens = reusedResult!.answers[0]!.inputTokens;
  const pick = (key: "renderMs" | "evaluateMs" | "totalMs") => median(reusedQuestion.map((t) => t[key]));
  console.log(
    `\n3. 21 noul questions over one state (${promptTokens} prompt tokens for the first question), letters-only readout, ${blocks} blocks of a reused run and ${freshSubset} fresh questions, order alternating (${loadLine()}):`,
  );
  console.log(
    `   reused: median ${fmt(median(reusedRuns))} for 21 (${reusedResult!.usage.evaluatedTokens} tokens evaluated of ${reusedResult!.usage.inputTokens}), ${((21 / median(reusedRuns)) * 1000).toFixed(2)} decisions/s; blocks ${reusedRuns.map(fmt).join(", ")}`,
  );
  console.log(
    `   fresh: median ${fmt(median(freshRuns))} for ${freshSubset}, scaled x${scale} to ${fmt(median(freshRuns) * scale)} for 21; blocks ${freshRuns.map(fmt).join(", ")}`,
  );
  console.log(
    `   speed-up reused vs fresh: ${median(blockRatios).toFixed(2)}x (median of the blocks' ratios: ${blockRatios.map((r) => `${r.toFixed(2)}x`).join(", ")})`,
  );
  // The reused run's first question is itself a fresh one, timed seconds before the other 20: the
  // ratio against it pairs the two sides closest in time (printed beside, not instead).
  const withinRun = median(reusedRuns.map((reused, b) => (firstQuestionMs[b]! * questions.length) / reused));
  console.log(
    `   against each reused run's own first question (a fresh one, seconds before the 20 reused): ${withinRun.toFixed(2)}x (median of the blocks)`,
  );
  console.log(
    `   one question: fresh ${fmt(median(firstQuestionMs))} (each reused run's first), reused ${fmt(pick("totalMs"))} (render ${fmt(pick("renderMs"))}, evaluate ${fmt(pick("evaluateMs"))}; median of ${reusedQuestion.length}); llama.cpp alone for the same ${floorTokens} tokens ${fmt(median(floorMs))} (median of ${floorMs.length})`,
  );
}

// 4. 50 items of about 60 tokens under one policy preamble of about 300 tokens.
{
  const policyQuestion: KeyedQuestion = {
    ...teamQuestion,
    instructions: `Route the ticket to one team. Policy: ${words(230, 11)}`,
  };
  const items = Array.from({ length: 50 }, (_, i) => words(55, i * 3 + 1));
  const withoutSubset = 10;
  const sample = await scorer.score(
    decisionRequest({
      state: items[0]!,
      questions: [policyQuestion],
      layout: "policy-first",
      tokenMass: false,
    }),
    { reuse: false },
  );
  await scorer.clearCache();
  // Five blocks, each 10 items with reuse then 2 without, so that a drift in the machine's speed
  // during the run weighs on both sides alike. The items without reuse run on a scorer of their
  // own: `reuse: false` clears the scorer's prefix slots, and on the same scorer every block after
  // the first would evaluate the preamble again, which 50 items of one policy in a row (an async
  // object's) never do. The preamble is evaluated once, timed, by the first item with reuse.
  const freshScorer = await DecisionScorer.create(model, { contextSize, prefixSlots: 1 });
  const statsBefore = scorer.cacheStats;
  const score = (state: string, reuse: boolean) =>
    (reuse ? scorer : freshScorer).score(
      decisionRequest({ state, questions: [policyQuestion], layout: "policy-first", tokenMass: false }),
      { reuse },
    );
  let withReuse = 0;
  let without = 0;
  const blocksOf = withoutSubset / 2;
  for (let b = 0; b < blocksOf; b++) {
    const chunk = items.slice(b * 10, b * 10 + 10);
    withReuse += await timed(async () => {
      for (const state of chunk) await score(state, true);
    });
    without += await timed(async () => {
      for (const state of items.slice(b * 2, b * 2 + 2)) await score(state, false);
    });
  }
  const scaled = (without / withoutSubset) * items.length;
  console.log(
    `\n4. 50 items under one policy preamble (${sample.answers[0]!.inputTokens} prompt tokens each), letters-only readout, in ${blocksOf} interleaved blocks (${loadLine()}):`,
  );
  console.log(`   with preamble reuse: ${fmt(withReuse)} (${((50 / withReuse) * 1000).toFixed(2)} items/s)`);
  console.log(
    `   without: ${fmt(without)} for ${withoutSubset}, scaled x${items.length / withoutSubset} to ${fmt(scaled)} (${((50 / scaled) * 1000).toFixed(2)} items/s)`,
  );
  const stats = scorer.cacheStats;
  console.log(
    `   speed-up: ${(scaled / withReuse).toFixed(2)}x (with reuse: slot hits ${stats.hits - statsBefore.hits}, misses ${stats.misses - statsBefore.misses})`,
  );
  await freshScorer.dispose();
}

// 5. Four free-text options of 5 to 10 tokens, full-option likelihood.
{
  const options = [5, 7, 8, 10].map((n, i) => ({ id: `o${i}`, description: words(n, i * 5 + 2) }));
  const question: KeyedQuestion = {
    key: "free",
    type: "choice",
    scoring: "likelihood",
    instructions: "Which answer fits?",
    options,
  };
  const state = words(150, 9);
  const reused = await scorer.score(decisionRequest({ state, questions: [question] }), { reuse: false });
  await scorer.clearCache();
  const reusedMs = await timed(() => scorer.score(decisionRequest({ state, questions: [question] })));
  const scratchMs = await timed(() =>
    scorer.score(decisionRequest({ state, questions: [question] }), { reuse: false }),
  );
  const answer = reused.answers[0]!;
  console.log(
    `\n5. full-option likelihood, 4 options of ${answer.likelihood!.tokens.join("/")} tokens after a ${answer.inputTokens}-token prompt (${loadLine()}):`,
  );
  console.log(`   prompt reused across options: ${fmt(reusedMs)}`);
  console.log(
    `   each option from scratch: ${fmt(scratchMs)}: reuse is ${(scratchMs / reusedMs).toFixed(2)}x faster`,
  );
}

// 6. Three policies interleaved (60 items, as mixed traffic arrives) on 1 prefix slot and on 3,
// against the same 60 items under one policy (the single-policy rate the slots should keep). Every
// run first sees each policy it will use once, outside the clock: the single-policy run starts with
// its preamble cached, so the interleaved runs do too (timing their first sight of policies 2 and 3
// compared two cold preambles against none). Hits and misses are those of the timed items.
{
  const policies = [0, 1, 2].map(
    (p): KeyedQuestion => ({
      ...teamQuestion,
      key: `p${p}`,
      instructions: `Policy ${p}: ${words(230, p * 101 + 11)}`,
    }),
  );
  const items = Array.from({ length: 60 }, (_, i) => words(55, i * 3 + 2));
  /** A scorer with `slots` prefix slots that has seen each policy `questionOf` names once, outside the clock. */
  const warmed = async (slots: number, questionOf: (i: number) => KeyedQuestion) => {
    const pooled = await DecisionScorer.create(model, { contextSize: 2048, prefixSlots: slots });
    for (const i of [0, 1, 2])
      await pooled.score(
        decisionRequest({
          state: "warm",
          questions: [questionOf(i)],
          layout: "policy-first",
          tokenMass: false,
        }),
      );
    return pooled;
  };
  /** Times `pooled` on items [from, to), each under its policy; hits and misses are those of the timed items. */
  const timedRun = async (
    pooled: DecisionScorer,
    questionOf: (i: number) => KeyedQuestion,
    from: number,
    to: number,
  ) => {
    const before = pooled.cacheStats;
    const ms = await timed(async () => {
      for (let i = from; i < to; i++)
        await pooled.score(
          decisionRequest({
            state: items[i]!,
            questions: [questionOf(i)],
            layout: "policy-first",
            tokenMass: false,
          }),
        );
    });
    const after = pooled.cacheStats;
    return { ms, hits: after.hits - before.hits, misses: after.misses - before.misses };
  };
  const one = (_: number) => policies[0]!;
  const mixed = (i: number) => policies[i % 3]!;
  const singleScorer = await warmed(1, one);
  const slotScorer = await warmed(3, mixed);
  // Three blocks of 20 items, the single-policy run and the 3-slot run back to back in each (their
  // order alternating), so that a drift in the machine's speed weighs on both alike.
  const block = 20;
  const single = { ms: 0, hits: 0, misses: 0 };
  const threeSlots = { ms: 0, hits: 0, misses: 0 };
  const ratios: number[] = [];
  const add = (to: typeof single, r: typeof single) => {
    to.ms += r.ms;
    to.hits += r.hits;
    to.misses += r.misses;
    return r.ms;
  };
  for (let b = 0; b * block < items.length; b++) {
    const [from, to] = [b * block, (b + 1) * block];
    const runSingle = async () => add(single, await timedRun(singleScorer, one, from, to));
    const runSlots = async () => add(threeSlots, await timedRun(slotScorer, mixed, from, to));
    const slotsFirst = b % 2 === 1;
    const earlier = await (slotsFirst ? runSlots : runSingle)();
    const later = await (slotsFirst ? runSingle : runSlots)();
    const [s1, s3] = slotsFirst ? [later, earlier] : [earlier, later];
    ratios.push(s1 / s3);
  }
  await singleScorer.dispose();
  await slotScorer.dispose();
  // One slot under interleaved policies misses every item (each evaluates its whole preamble):
  // timed on the first block alone.
  const oneSlotScorer = await warmed(1, mixed);
  const oneSlot = await timedRun(oneSlotScorer, mixed, 0, block);
  await oneSlotScorer.dispose();
  const rate = (ms: number, n: number) => ((n / ms) * 1000).toFixed(2);
  console.log(
    `\n6. 60 items, 3 policies interleaved (policy-first, letters-only; 3 blocks of 20, alternating; ${loadLine()}):`,
  );
  console.log(`   one policy, 1 slot: ${fmt(single.ms)} (${rate(single.ms, items.length)} items/s)`);
  console.log(
    `   interleaved, 3 slots: ${fmt(threeSlots.ms)} (${rate(threeSlots.ms, items.length)} items/s; hits ${threeSlots.hits}, misses ${threeSlots.misses})`,
  );
  console.log(
    `   interleaved, 1 slot, first block only: ${fmt(oneSlot.ms)} for ${block} (${rate(oneSlot.ms, block)} items/s; hits ${oneSlot.hits}, misses ${oneSlot.misses})`,
  );
  console.log(
    `   3 slots keep ${(single.ms / threeSlots.ms).toFixed(2)}x of the single-policy rate (blocks: ${ratios.map((r) => r.toFixed(2)).join(", ")}); 1 slot keeps ${(((single.ms / items.length) * block) / oneSlot.ms).toFixed(2)}x`,
  );
}

const peak = process.resourceUsage().maxRSS / 2 ** 20;
console.log(`\n7. peak memory (max RSS): ${peak.toFixed(2)} GiB (${loadLine()})`);

await prefillContext.dispose();
await scorer.dispose();
await model.dispose();
