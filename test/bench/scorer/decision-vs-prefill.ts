/**
 * Sections 1 and 2 of `npm run bench:scorer`: prefill throughput, and one choice decision of about
 * 200 tokens against a pure prefill of the same tokens (issue 44's "decision / pure prefill").
 */
import { keptLogitsState } from "../../../endpoint/scorer/kept-logits.ts";
import { letterReadoutRequest, TOP_TOKEN_READOUT } from "../../../endpoint/scorer/letter-readout.ts";
import { buildDecisionPrompt } from "../../../endpoint/scorer/prompt.ts";
import type { NextTokenReadout } from "../../../endpoint/scorer/prompt-sequence.ts";
import { type DecisionInput, decisionRequest } from "../../helpers/decision-requests.ts";
import { fmt, loadLine, median, TEAM_QUESTION, timed, words } from "../bench-helpers.ts";
import { prefillWithOutput, pureprefill, type ScorerBench } from "./bench-context.ts";

/** 1. Prefill throughput: 512 tokens from an empty cache. */
export async function prefillThroughput(bench: ScorerBench): Promise<void> {
  const { scorer, blocks } = bench;
  const tokens = scorer.promptTokens({ system: words(300), user: words(200, 3) }).slice(0, 512);
  await pureprefill(bench, tokens); // warm-up
  const ms: number[] = [];
  for (let b = 0; b < blocks; b++) ms.push(await pureprefill(bench, tokens));
  console.log(
    `\n1. prefill: ${tokens.length} tokens in ${fmt(median(ms))} = ${((tokens.length / median(ms)) * 1000).toFixed(0)} tokens/s (${loadLine()})`,
  );
}

/** 2. One choice decision of about 200 tokens against a pure prefill of the same tokens. */
export async function decisionAgainstPrefill(bench: ScorerBench): Promise<void> {
  const { model, scorer, blocks } = bench;
  let stateWords = 1;
  const tokenCount = (n: number) => {
    const prompt = buildDecisionPrompt(
      words(n),
      { instructions: TEAM_QUESTION.instructions, options: TEAM_QUESTION.options! },
      "state-first",
      "letters",
    );
    return scorer.promptTokens(prompt);
  };
  while (tokenCount(stateWords).length < 200) stateWords++;
  const tokens = tokenCount(stateWords);
  const request = (tokenMass: boolean): DecisionInput => ({
    state: words(stateWords),
    questions: [TEAM_QUESTION],
    tokenMass,
  });
  await scorer.score(decisionRequest(request(true)), { reuse: false }); // warm-up
  const pre: number[] = [];
  const preOut: number[] = [];
  const lettersOnly: number[] = [];
  const withMass: number[] = [];
  const letters = scorer.letterTokens.slice(0, TEAM_QUESTION.options!.length);
  const variants: [number[], () => Promise<number>][] = [
    [pre, () => pureprefill(bench, tokens)],
    [preOut, () => prefillWithOutput(bench, tokens)],
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
