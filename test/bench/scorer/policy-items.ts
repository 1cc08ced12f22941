/**
 * Sections 4 and 5 of `npm run bench:scorer`: 50 items under one policy preamble (issue 44's "50
 * items"), and full-option likelihood over four free-text options.
 */
import { DecisionScorer } from "../../../endpoint/scorer/scorer.ts";
import { decisionRequest, type KeyedQuestion } from "../../helpers/decision-requests.ts";
import { fmt, loadLine, TEAM_QUESTION, timed, words } from "../bench-helpers.ts";
import type { ScorerBench } from "./bench-context.ts";

/** 4. 50 items of about 60 tokens under one policy preamble of about 300 tokens. */
export async function itemsUnderOnePreamble(bench: ScorerBench): Promise<void> {
  const { model, scorer, contextSize } = bench;
  const policyQuestion: KeyedQuestion = {
    ...TEAM_QUESTION,
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

/** 5. Four free-text options of 5 to 10 tokens, full-option likelihood. */
export async function optionLikelihood(bench: ScorerBench): Promise<void> {
  const { scorer } = bench;
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
