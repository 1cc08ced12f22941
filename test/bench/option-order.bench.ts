import { DecisionModel } from "../../endpoint/runtime/decision-model.ts";
import { DecisionScorer } from "../../endpoint/scorer/scorer.ts";
import type { OptionOrder, PromptLayout } from "../../shared/domain/contracts/system-one/index.ts";
import { decisionRequest } from "../helpers/decision-requests.ts";
import {
  benchModelPath,
  fmt,
  machineLine,
  median,
  modelBenchFlags,
  TEAM_QUESTION,
  timed,
  words,
} from "./bench-helpers.ts";

const {
  shape: shapeName,
  threads,
  blocks,
  values: flags,
} = modelBenchFlags({
  words: { type: "string", default: "45" },
  items: { type: "string", default: "20" },
});

const model = await DecisionModel.load({ modelPath: await benchModelPath(shapeName), threads });
const scorer = await DecisionScorer.create(model, { contextSize: 2048 });
const question = TEAM_QUESTION;
const items = Array.from({ length: Number(flags.items) }, (_, i) => words(Number(flags.words), i * 7 + 3));

interface Variant {
  readonly name: string;
  readonly layout: PromptLayout;
  readonly optionOrder: OptionOrder;
}
const variants: Variant[] = [
  { name: "one pass, policy-first (default)", layout: "policy-first", optionOrder: "declared" },
  { name: "one pass, state-first", layout: "state-first", optionOrder: "declared" },
  { name: "cyclic, state-first (4 rotations)", layout: "state-first", optionOrder: "cyclic" },
];

/** Decides every item under a variant; ms per decision and tokens evaluated per decision. */
async function run(variant: Variant): Promise<{ ms: number; evaluated: number; input: number }> {
  let evaluated = 0;
  let input = 0;
  await scorer.clearCache();
  const ms = await timed(async () => {
    for (const state of items) {
      const result = await scorer.score(
        decisionRequest({
          state,
          questions: [{ ...question, optionOrder: variant.optionOrder }],
          layout: variant.layout,
          tokenMass: false,
        }),
      );
      evaluated += result.usage.evaluatedTokens;
      input += result.usage.inputTokens;
    }
  });
  return { ms: ms / items.length, evaluated: evaluated / items.length, input: input / items.length };
}

console.log(
  `\n# option-order benchmark: ${shapeName}, ${threads} threads, ${blocks} blocks, ${items.length} items of ${flags.words} words`,
);
console.log(machineLine());
for (const variant of variants) await run(variant); // warm-up
const samples = variants.map(() => [] as { ms: number; evaluated: number; input: number }[]);
for (let b = 0; b < blocks; b++) {
  for (const [i, variant] of variants.entries()) samples[i]!.push(await run(variant));
}
const base = median(samples[0]!.map((s) => s.ms));
for (const [i, variant] of variants.entries()) {
  const ms = median(samples[i]!.map((s) => s.ms));
  const { evaluated, input } = samples[i]![0]!;
  console.log(
    `   ${variant.name}: ${fmt(ms)} per decision, ${evaluated.toFixed(0)} of ${input.toFixed(0)} prompt tokens evaluated, ${(ms / base).toFixed(2)}x the default`,
  );
}
await scorer.dispose();
await model.dispose();
