/**
 * The System One request validation: the defaults it applies, the options it resolves, and each
 * rejection naming the parameter as System One names it (`questions.<key>.criteria`), with the
 * code the endpoint answers 422 with.
 */
import { describe, expect, it } from "vitest";
import {
  parseSystemOneRequest,
  SystemOneViolationError,
} from "../../shared/domain/contracts/system-one/index.ts";

const criteria = (n: number) =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`o${i}`, `Option ${i}`]));
const valid = (question: Record<string, unknown> = {}) => ({
  state: "My card was charged twice",
  questions: { team: { type: "choice", instructions: "Which team?", criteria: criteria(3), ...question } },
});
const parse = (body: unknown) => parseSystemOneRequest(body, { tokenMass: true });

/** Asserts the request is refused with a violation that names `param`. */
function expectRejected(
  body: unknown,
  param: string | undefined,
  message: RegExp,
  code = "invalid_value",
): void {
  try {
    parse(body);
  } catch (error) {
    expect(error).toBeInstanceOf(SystemOneViolationError);
    const violation = error as SystemOneViolationError;
    expect(violation.side).toBe("request");
    expect(violation.param).toBe(param);
    expect(violation.code).toBe(code);
    expect(violation.message).toMatch(message);
    return;
  }
  throw new Error(`expected ${param} to be rejected`);
}

describe("parseSystemOneRequest", () => {
  it("accepts a valid request and applies defaults", () => {
    const request = parse(valid());
    expect(request.layout).toBe("state-first");
    expect(request.token_mass).toBe(true);
    expect(parseSystemOneRequest(valid(), { tokenMass: false }).token_mass).toBe(false);
    const [question] = request.questions;
    expect(question).toMatchObject({
      key: "team",
      temperature: 1,
      scoring: "letters",
      option_order: "declared",
    });
    expect(question!.options.map((o) => o.id)).toEqual(["o0", "o1", "o2"]);
  });

  it("gives noul questions the true/false options, true first", () => {
    const request = parse({ state: "x", questions: { q: { type: "noul", instructions: "Is it?" } } });
    expect(request.questions[0]!.options.map((o) => o.id)).toEqual(["true", "false"]);
  });

  it("lets noul questions word true and false, keeping true first", () => {
    const request = parse({
      state: "x",
      questions: {
        q: {
          type: "noul",
          instructions: "Billing?",
          criteria: { false: "Not about money", true: "About a charge or refund" },
        },
      },
    });
    expect(request.questions[0]!.options).toEqual([
      { id: "true", description: "About a charge or refund" },
      { id: "false", description: "Not about money" },
    ]);
  });

  it("keys score levels by their index, low to high", () => {
    const request = parse({
      state: "x",
      questions: { q: { type: "score", instructions: "How?", criteria: ["low", "high"] } },
    });
    expect(request.questions[0]!.options).toEqual([
      { id: "0", description: "low" },
      { id: "1", description: "high" },
    ]);
  });

  it("rejects 1 and 17 options, naming the criteria", () => {
    expectRejected(valid({ criteria: criteria(1) }), "questions.team.criteria", /2 to 16 options, got 1/);
    expectRejected(valid({ criteria: criteria(17) }), "questions.team.criteria", /2 to 16 options, got 17/);
  });

  it("accepts exactly 16 options", () => {
    expect(parse(valid({ criteria: criteria(16) })).questions[0]!.options).toHaveLength(16);
  });

  it("rejects option ids that trim alike and repeated levels, naming the repeated one", () => {
    expectRejected(
      valid({ criteria: { o0: "A", o1: "B", " o0": "again" } }),
      "questions.team.criteria. o0",
      /"o0" and " o0" are the same after trimming/,
    );
    expectRejected(
      { state: "x", questions: { q: { type: "score", instructions: "How?", criteria: ["a", "b", "a"] } } },
      "questions.q.criteria.2",
      /duplicate level "a"/,
    );
  });

  it("names an option id that is too long by the id itself, as System One does", () => {
    const long = "x".repeat(129);
    expectRejected(
      valid({ criteria: { a: "A", [long]: "B" } }),
      `questions.team.criteria.${long}`,
      /at most 128/,
    );
  });

  it("rejects an empty state in every form", () => {
    for (const state of ["", "   ", {}, [], null, 42, undefined])
      expectRejected({ ...valid(), state }, "state", /must/, "invalid_decision");
  });

  it("rejects an empty question", () => {
    expectRejected(valid({ instructions: "  " }), "questions.team.instructions", /must not be empty/);
  });

  it("rejects non-finite numbers in the state and the temperature", () => {
    expectRejected(
      { ...valid(), state: { amount: Number.NaN } },
      "state.amount",
      /non-finite/,
      "invalid_decision",
    );
    expectRejected(
      { ...valid(), state: { rows: [1, Number.POSITIVE_INFINITY] } },
      "state.rows.1",
      /non-finite/,
      "invalid_decision",
    );
    expectRejected(valid({ temperature: Number.POSITIVE_INFINITY }), "questions.team.temperature", /./);
    expectRejected(valid({ temperature: 0 }), "questions.team.temperature", /above 0/);
  });

  it("refuses the cyclic order on score levels, as a decision it cannot make", () => {
    expectRejected(
      {
        state: "x",
        questions: {
          q: { type: "score", instructions: "How?", criteria: ["a", "b"], option_order: "cyclic" },
        },
      },
      "questions.q.option_order",
      /levels are ordered/,
      "invalid_decision",
    );
  });

  it("rejects an unknown question type, options on noul, missing criteria and unknown fields", () => {
    expectRejected(valid({ type: "ranking" }), "questions.team.type", /choice, score, noul/);
    expectRejected(
      { state: "x", questions: { q: { type: "noul", instructions: "Is it?", criteria: criteria(2) } } },
      "questions.q.criteria",
      /o0/,
    );
    expectRejected(
      { state: "x", questions: { q: { type: "score", instructions: "How?" } } },
      "questions.q.criteria",
      /./,
    );
    expectRejected({ ...valid(), extra: 1 }, undefined, /extra/i);
    expectRejected(valid({ optionOrder: "cyclic" }), "questions.team", /optionOrder/);
  });
});
