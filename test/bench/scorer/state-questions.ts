/**
 * Section 3 of `npm run bench:scorer`: 21 yes/no questions over one state of about 1,700 tokens,
 * reused against fresh (issue 44's "21 questions"), with llama.cpp's own time for a reused
 * question's tokens beside it.
 */
import { BASE_WORDS } from "../../../endpoint/models/words.ts";
import { letterReadoutRequest } from "../../../endpoint/scorer/letter-readout.ts";
import { buildDecisionPrompt } from "../../../endpoint/scorer/prompt.ts";
import { decisionRequest, type KeyedQuestion } from "../../helpers/decision-requests.ts";
import { fmt, loadLine, median, timed, words } from "../bench-helpers.ts";
import type { ScorerBench } from "./bench-context.ts";

/** 3. 21 yes/no questions over one state: reused against fresh, in paired blocks. */
export async function questionsOnOneState(bench: ScorerBench): Promise<void> {
  const { model, scorer, prefill, blocks } = bench;
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
  // llama.cpp alone, on the bench's second context of the same settings: the same 21 prompts,
  // the first from an empty cache and the other 20 each on the cache the one before left, with the
  // same readout and nothing of the scorer's (no request, no rendering, no tokenizing). Run in each
  // block beside the reused run (on the side away from the fresh questions, so those two stay back
  // to back), its ratio is what llama.cpp itself reads on this work at that minute: a reference
  // taken seconds apart on another context, not a bound. The prompts are tokenized whole, so the
  // scorer's kept heads are not filled before its first block.
  const request = decisionRequest({ state, questions, tokenMass: false });
  const prompts = request.questions.map((question) => {
    const { system, user } = buildDecisionPrompt(request.state, question, request.layout, question.scoring);
    return scorer.promptTokens({ system, user });
  });
  const readout = letterReadoutRequest(model.model, scorer.letterTokens.slice(0, 2), false);
  const floorRatios: number[] = [];
  const floorMs: number[] = [];
  let floorTokens = 0;
  const runFloor = async () => {
    await prefill.clear();
    const first = await timed(() => prefill.evaluate(prompts[0]!, readout));
    let rest = 0;
    for (const prompt of prompts.slice(1)) {
      const ms = await timed(async () => {
        floorTokens = (await prefill.evaluate(prompt, readout)).evaluatedTokens;
      });
      floorMs.push(ms);
      rest += ms;
    }
    floorRatios.push((first * prompts.length) / (first + rest));
  };
  for (let b = 0; b < blocks; b++) {
    if (b % 2 === 0) {
      await runFloor();
      await runReused();
      await runFresh(b);
    } else {
      await runFresh(b);
      await runReused();
      await runFloor();
    }
  }
  const scale = questions.length / freshSubset;
  const blockRatios = reusedRuns.map((reused, b) => (freshRuns[b]! * scale) / reused);
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
  const withinRun = reusedRuns.map((reused, b) => (firstQuestionMs[b]! * questions.length) / reused);
  console.log(
    `   against each reused run's own first question (a fresh one, seconds before the 20 reused): ${median(withinRun).toFixed(2)}x (blocks: ${withinRun.map((r) => `${r.toFixed(2)}x`).join(", ")})`,
  );
  console.log(
    `   one question: fresh ${fmt(median(firstQuestionMs))} (each reused run's first), reused ${fmt(pick("totalMs"))} (render ${fmt(pick("renderMs"))}, evaluate ${fmt(pick("evaluateMs"))}; median of ${reusedQuestion.length}); llama.cpp alone for the same ${floorTokens} tokens ${fmt(median(floorMs))} (median of ${floorMs.length})`,
  );
  console.log(
    `   llama.cpp alone on the same 21 prompts beside each reused run (first from empty, 20 on its cache; another context): ${median(floorRatios).toFixed(2)}x (blocks: ${floorRatios.map((r) => `${r.toFixed(2)}x`).join(", ")})`,
  );
}
