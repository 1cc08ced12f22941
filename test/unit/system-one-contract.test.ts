/**
 * The System One contract without a model: the one option rule (the policy schema and the
 * request validation refuse the same things in the same words), the response writer (floats
 * always with a decimal point, values keyed by option id in declared order) and the reader
 * (values read by id, never by position; a broken answer is a response-side violation).
 */
import { describe, expect, it } from "vitest";
import { parseJsonStrict, stringifyJson } from "../../shared/domain/contracts/json.ts";
import {
  type DecisionResult,
  optionRuleBreach,
  parseSystemOneRequest,
  type QuestionResult,
  readDecisionAnswer,
  SystemOneViolationError,
  systemOneRequest,
  systemOneResponse,
} from "../../shared/domain/contracts/system-one/index.ts";
import { PolicyError, parsePolicy } from "../../shared/domain/policy/policy.ts";

const option = (id: string) => ({ id, description: `Option ${id}`, automate: true });
const policyWith = (fields: Record<string, unknown>) => () =>
  parsePolicy({ id: "p", version: 1, question: "Which?", type: "choice", autoThreshold: 0.8, ...fields });

describe("the option rule", () => {
  it("allows 2 to 16 distinct options, true and false on noul, and cyclic only on unordered options", () => {
    expect(optionRuleBreach("choice", ["a", "b"], "cyclic")).toBeUndefined();
    expect(optionRuleBreach("choice", ["a"], "declared")?.problem).toBe("must hold 2 to 16 options, got 1");
    expect(optionRuleBreach("score", ["x", "y", "x"], "declared")).toMatchObject({ on: "option", index: 2 });
    expect(optionRuleBreach("noul", ["yes", "no"], "declared")?.on).toBe("options");
    expect(optionRuleBreach("score", ["low", "high"], "cyclic")?.on).toBe("order");
  });

  it("is the policy schema's rule and the request's, in the same words", () => {
    const one = "must hold 2 to 16 options, got 1";
    expect(policyWith({ options: [option("a")] })).toThrow(PolicyError);
    expect(policyWith({ options: [option("a")] })).toThrow(`options: ${one}`);
    expect(() =>
      parseSystemOneRequest(
        { state: "x", questions: { q: { type: "choice", instructions: "Which?", criteria: { a: "A" } } } },
        { tokenMass: true },
      ),
    ).toThrow(`questions.q.criteria: ${one}`);
    expect(policyWith({ type: "score", optionOrder: "cyclic", options: [option("a"), option("b")] })).toThrow(
      /optionOrder: cyclic applies to choice and noul questions/,
    );
    expect(policyWith({ options: [option("a"), option("a")] })).toThrow(
      'options.1.id: duplicate option id "a"',
    );
  });
});

/** A scorer answer with the given values, in the order of `ids`. */
function answer(
  key: string,
  type: QuestionResult["type"],
  ids: string[],
  probabilities: number[],
): QuestionResult {
  return {
    key,
    type,
    scoring: "letters",
    optionIds: ids,
    probabilities,
    rawProbabilities: probabilities,
    logits: probabilities.map((p) => Math.log(Math.max(p, 1e-30))),
    temperature: 1,
    chosen: ids[probabilities.indexOf(Math.max(...probabilities))]!,
    confidence: 1,
    ...(type === "score" ? { score: 2 } : {}),
    ...(type === "noul" ? { noul: probabilities[0]! } : {}),
    allowedTokenMass: 1,
    optionOrder: "declared",
    passes: 1,
    inputTokens: 10,
    reusedTokens: 0,
    evaluatedTokens: 10,
    promptVersion: "direct-options/state-first@2",
    promptSha256: "a".repeat(64),
    timings: { renderMs: 0, evaluateMs: 1, readoutMs: 0, totalMs: 1 },
  };
}

const resultOf = (answers: QuestionResult[]): DecisionResult => ({
  modelSha256: "b".repeat(64),
  answers,
  usage: { inputTokens: 10, evaluatedTokens: 10 },
  totalMs: 1,
});

describe("the response writer", () => {
  const body = `{"state":"x","questions":{"team":{"type":"choice","instructions":"Which?","criteria":{"2":"Two","1":"One"}},"level":{"type":"score","instructions":"How?","criteria":["low","mid","high"]}}}`;

  it("writes every probability and score with a decimal point, keyed by option id in declared order", () => {
    const request = parseSystemOneRequest(parseJsonStrict(body), { tokenMass: true });
    expect(request.questions[0]!.options.map((o) => o.id)).toEqual(["2", "1"]);
    const result = resultOf([
      answer("team", "choice", ["2", "1"], [1, 0]),
      answer("level", "score", ["0", "1", "2"], [0, 0, 1]),
    ]);
    const text = stringifyJson(systemOneResponse(request, result, "tiny"));
    expect(text).toContain('"probabilities":{"2":1.0,"1":0.0}');
    expect(text).toContain('"score":2.0');
    expect(text).toContain('"legend":{"0":"low","1":"mid","2":"high"}');
    expect(text).toContain('"confidence":1.0');
  });
});

describe("the response reader", () => {
  const policy = parsePolicy({
    id: "p",
    version: 1,
    question: "Which?",
    type: "choice",
    autoThreshold: 0.8,
    options: [option("billing"), option("technical")],
  });
  const request = parseSystemOneRequest(systemOneRequest({ id: "I", policy: "p", state: "x" }, policy), {
    tokenMass: true,
  });

  it("reads logits by option id, whatever order the answer lists them in", () => {
    const written = systemOneResponse(
      request,
      resultOf([answer("decision", "choice", ["technical", "billing"], [0.9, 0.1])]),
      "tiny",
    );
    const decision = readDecisionAnswer(JSON.parse(stringifyJson(written)), "choice", [
      "billing",
      "technical",
    ]);
    expect(decision.logits[0]).toBeCloseTo(Math.log(0.1), 12);
    expect(decision.logits[1]).toBeCloseTo(Math.log(0.9), 12);
  });

  it("refuses an answer keyed by other ids as a response-side violation", () => {
    const written = systemOneResponse(
      request,
      resultOf([answer("decision", "choice", ["a", "b"], [0.5, 0.5])]),
      "tiny",
    );
    const read = () =>
      readDecisionAnswer(JSON.parse(stringifyJson(written)), "choice", ["billing", "technical"]);
    expect(read).toThrow(SystemOneViolationError);
    expect(read).toThrow(
      /^malformed answer: logits must be keyed by billing, technical; missing billing, technical; extra a, b$/,
    );
    try {
      read();
    } catch (error) {
      expect((error as SystemOneViolationError).side).toBe("response");
      expect((error as SystemOneViolationError).code).toBe("malformed_answer");
    }
  });
});
