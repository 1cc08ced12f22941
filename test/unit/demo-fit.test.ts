/**
 * The demo model's fit: a policy's own question and option words must add up to no evidence, so
 * they cannot act as a per-policy intercept that decides every item whose words the model does
 * not know (before this, every unfamiliar friendly post was read as "remove").
 */
import { describe, expect, it } from "vitest";
import { chatText } from "../../endpoint/models/chat-template.ts";
import { type DemoExample, fitEvidence, promptScaffold, wordsOf } from "../../endpoint/models/demo-fit.ts";
import { buildDecisionPrompt } from "../../endpoint/scorer/prompt.ts";

const MODERATION = " Is this post fine? keep allow spam restrict remove abuse";
const TICKETS = " Which team should answer this ticket? billing money technical bug";

/** Labels skewed 3:1 towards "remove": an unconstrained fit leans on the preamble for that. */
const examples: DemoExample[] = [
  ...["kill", "hate", "attack", "hurt", "burn", "stab"].map((w) => ({
    text: ` ${w}`,
    letter: 2,
    options: 3,
    preamble: MODERATION,
  })),
  ...["thanks", "lovely"].map((w) => ({ text: ` ${w} photo`, letter: 0, options: 3, preamble: MODERATION })),
  ...["cheap", "promo"].map((w) => ({ text: ` ${w} deal`, letter: 1, options: 3, preamble: MODERATION })),
  ...["refund", "invoice"].map((w) => ({ text: ` my ${w}`, letter: 0, options: 2, preamble: TICKETS })),
  ...["crash", "error"].map((w) => ({ text: ` app ${w}`, letter: 1, options: 2, preamble: TICKETS })),
];

function evidenceOf(evidence: Map<string, Float64Array>, text: string, options: number): number[] {
  const sum = new Array<number>(options).fill(0);
  for (const word of wordsOf(text)) {
    const v = evidence.get(word);
    if (v) for (let k = 0; k < options; k++) sum[k] = (sum[k] ?? 0) + (v[k] ?? 0);
  }
  return sum;
}

describe("demo model fit", () => {
  const evidence = fitEvidence(examples, { epochs: 2000 });

  it("gives each policy's preamble zero evidence for every one of its letters", () => {
    for (const [preamble, options] of [
      [MODERATION, 3],
      [TICKETS, 2],
    ] as const)
      for (const value of evidenceOf(evidence, preamble, options)) expect(Math.abs(value)).toBeLessThan(1e-9);
  });

  it("still separates the training items by their own words", () => {
    for (const e of examples) {
      const scores = evidenceOf(evidence, `${e.text} ${e.preamble}`, e.options);
      expect(scores.indexOf(Math.max(...scores)), e.text).toBe(e.letter);
    }
  });

  it("leaves an item of unknown words undecided instead of leaning to the majority label", () => {
    const scores = evidenceOf(evidence, ` what a grand sunrise ${MODERATION}`, 3);
    expect(Math.max(...scores) - Math.min(...scores)).toBeLessThan(1e-9);
    // Without the constraint, the same data makes the preamble itself favour "remove".
    const skew = fitEvidence(examples, { epochs: 2000, zeroIntercepts: false });
    const unconstrained = evidenceOf(skew, MODERATION, 3);
    expect(unconstrained.indexOf(Math.max(...unconstrained))).toBe(2);
  });

  it("counts in the preamble every word the real prompt holds apart from the item", () => {
    const policy = {
      question: "Which team should handle this ticket?",
      options: [
        { id: "billing", description: "Billing: invoices and refunds" },
        { id: "other", description: "None of these" },
      ],
    };
    const item = { subject: "Refund", body: "My invoice is wrong" };
    const prompt = buildDecisionPrompt(
      item,
      { instructions: policy.question, options: policy.options },
      "policy-first",
      "letters",
    );
    const whole = wordsOf(chatText(prompt.system, prompt.user)).sort();
    const parts = [...wordsOf(promptScaffold(policy)), ...wordsOf(JSON.stringify(item))].sort();
    expect(parts).toEqual(whole);
    expect(wordsOf(promptScaffold(policy))).toEqual(
      expect.arrayContaining(["evidence", "criterion", "a", "b"]),
    );
  });
});
