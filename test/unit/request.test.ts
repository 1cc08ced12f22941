import { describe, expect, it } from "vitest";
import { InvalidDecisionError } from "../../endpoint/runtime/errors.ts";
import { parseDecisionRequest } from "../../endpoint/scorer/request.ts";

const options = (n: number) =>
  Array.from({ length: n }, (_, i) => ({ id: `o${i}`, description: `Option ${i}` }));
const valid = () => ({
  state: "My card was charged twice",
  questions: [{ key: "team", type: "choice", instructions: "Which team?", options: options(3) }],
});

/** Asserts the request is rejected with an error that names `field`. */
function expectRejected(request: unknown, field: string, message: RegExp): void {
  try {
    parseDecisionRequest(request);
  } catch (error) {
    expect(error).toBeInstanceOf(InvalidDecisionError);
    expect((error as InvalidDecisionError).field).toBe(field);
    expect((error as Error).message).toMatch(message);
    return;
  }
  throw new Error(`expected ${field} to be rejected`);
}

describe("parseDecisionRequest", () => {
  it("accepts a valid request and applies defaults", () => {
    const request = parseDecisionRequest(valid());
    expect(request.layout).toBe("state-first");
    expect(request.tokenMass).toBe(true);
    expect(request.questions[0]!.temperature).toBe(1);
    expect(request.questions[0]!.scoring).toBe("letters");
    expect(request.questions[0]!.options.map((o) => o.id)).toEqual(["o0", "o1", "o2"]);
  });

  it("gives noul questions the true/false options, true first", () => {
    const request = parseDecisionRequest({
      state: "x",
      questions: [{ key: "q", type: "noul", instructions: "Is it?" }],
    });
    expect(request.questions[0]!.options.map((o) => o.id)).toEqual(["true", "false"]);
  });

  it("lets noul questions word true and false, keeping true first", () => {
    const request = parseDecisionRequest({
      state: "x",
      questions: [
        {
          key: "q",
          type: "noul",
          instructions: "Billing?",
          options: [
            { id: "false", description: "Not about money" },
            { id: "true", description: "About a charge or refund" },
          ],
        },
      ],
    });
    expect(request.questions[0]!.options.map((o) => o.id)).toEqual(["true", "false"]);
    expect(request.questions[0]!.options[0]!.description).toBe("About a charge or refund");
  });

  it("rejects 1 and 17 options, naming the options field", () => {
    const one = valid();
    one.questions[0]!.options = options(1);
    expectRejected(one, "questions[0].options", /2 to 16 options, got 1/);
    const seventeen = valid();
    seventeen.questions[0]!.options = options(17);
    expectRejected(seventeen, "questions[0].options", /2 to 16 options, got 17/);
  });

  it("accepts exactly 16 options", () => {
    const sixteen = valid();
    sixteen.questions[0]!.options = options(16);
    expect(parseDecisionRequest(sixteen).questions[0]!.options).toHaveLength(16);
  });

  it("rejects duplicate option ids and duplicate question keys", () => {
    const dup = valid();
    dup.questions[0]!.options = [...options(2), { id: "o0", description: "again" }];
    expectRejected(dup, "questions[0].options[2].id", /duplicate option id "o0"/);
    const keys = valid();
    keys.questions.push({ ...keys.questions[0]! });
    expectRejected(keys, "questions[1].key", /duplicate question key/);
  });

  it("rejects an empty state in every form", () => {
    for (const state of ["", "   ", {}, [], null, 42]) expectRejected({ ...valid(), state }, "state", /must/);
  });

  it("rejects an empty question", () => {
    const empty = valid();
    empty.questions[0]!.instructions = "  ";
    expectRejected(empty, "questions[0].instructions", /must not be empty/);
  });

  it("rejects non-finite numbers in the state and the temperature", () => {
    expectRejected({ ...valid(), state: { amount: Number.NaN } }, "state.amount", /non-finite/);
    expectRejected(
      { ...valid(), state: { rows: [1, Number.POSITIVE_INFINITY] } },
      "state.rows[1]",
      /non-finite/,
    );
    const hot = valid() as { questions: Record<string, unknown>[] };
    hot.questions[0]!.temperature = Number.POSITIVE_INFINITY;
    expectRejected(hot, "questions[0].temperature", /./);
    hot.questions[0]!.temperature = 0;
    expectRejected(hot, "questions[0].temperature", /above 0/);
  });

  it("rejects an unknown question type, options on noul, missing options and unknown fields", () => {
    const unknown = valid() as { questions: Record<string, unknown>[] };
    unknown.questions[0]!.type = "ranking";
    expectRejected(unknown, "questions[0].type", /choice, score, noul/);
    expectRejected(
      { state: "x", questions: [{ key: "q", type: "noul", instructions: "Is it?", options: options(2) }] },
      "questions[0].options",
      /exactly the two options "true" and "false"/,
    );
    expectRejected(
      { state: "x", questions: [{ key: "q", type: "score", instructions: "How?" }] },
      "questions[0].options",
      /needs options/,
    );
    expectRejected({ ...valid(), extra: 1 }, "request", /extra/i);
  });
});
