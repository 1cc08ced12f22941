/**
 * Section 6 of `npm run bench:scorer`: three policies interleaved (60 items, as mixed traffic
 * arrives) on 1 prefix slot and on 3, against the same 60 items under one policy (issue 44's "3
 * slots"). Every run first sees each policy it will use once, outside the clock: the
 * single-policy run starts with its preamble cached, so the interleaved runs do too (timing their
 * first sight of policies 2 and 3 compared two cold preambles against none). Hits and misses are
 * those of the timed items.
 */
import { DecisionScorer } from "../../../endpoint/scorer/scorer.ts";
import { decisionRequest, type KeyedQuestion } from "../../helpers/decision-requests.ts";
import { fmt, loadLine, TEAM_QUESTION, timed, words } from "../bench-helpers.ts";
import type { ScorerBench } from "./bench-context.ts";

/** 6. 60 items under 3 interleaved policies on 3 slots and on 1, against one policy. */
export async function interleavedPolicies(bench: ScorerBench): Promise<void> {
  const { model } = bench;
  const policies = [0, 1, 2].map(
    (p): KeyedQuestion => ({
      ...TEAM_QUESTION,
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
