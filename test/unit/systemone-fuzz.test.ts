/**
 * Property-based tests of the System One request validation (fast-check, bounded runs): whatever
 * JSON arrives, the answer is a parsed call or a 422 that names a field, never a crash; and for
 * valid requests every question key and option id survives, in the order written, whatever the
 * ids are (`__proto__`, `constructor`, integer-like, Unicode).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type ApiError, toApiError } from "../../endpoint/server/api-error.ts";
import { JsonInputError, parseJsonStrict } from "../../shared/domain/contracts/json.ts";
import {
  type DecisionRequest,
  parseSystemOneRequest,
  SystemOneViolationError,
} from "../../shared/domain/contracts/system-one/index.ts";

const defaults = { tokenMass: false };

/** Parses body text as the server does; returns the request or the error it would answer with. */
function parseText(text: string): DecisionRequest | ApiError | JsonInputError {
  try {
    return parseSystemOneRequest(parseJsonStrict(text), defaults);
  } catch (error) {
    if (error instanceof SystemOneViolationError) return toApiError(error);
    if (error instanceof JsonInputError) return error;
    throw error;
  }
}

/** A JSON object text with keys in exactly this order (JSON.stringify would move integer keys first). */
const objectText = (entries: readonly (readonly [string, string])[]) =>
  `{${entries.map(([key, value]) => `${JSON.stringify(key)}:${value}`).join(",")}}`;

const awkwardKey = fc.oneof(
  fc.constantFrom("__proto__", "constructor", "toString", "hasOwnProperty", "0", "1", "2", "10", "-1", "1.5"),
  fc.string({ minLength: 1, maxLength: 12 }),
  fc.integer({ min: 0, max: 10_000 }).map(String),
);

describe("System One parser under generated input", () => {
  it("answers any JSON with a call or a 422 naming what is wrong, never a crash", () => {
    const questionish = fc.record(
      {
        type: fc.oneof(fc.constantFrom("choice", "score", "noul"), fc.anything()),
        instructions: fc.oneof(fc.string(), fc.anything()),
        criteria: fc.oneof(
          fc.dictionary(fc.string(), fc.oneof(fc.string(), fc.constant(null))),
          fc.array(fc.string()),
          fc.anything(),
        ),
      },
      { requiredKeys: [] },
    );
    const body = fc.oneof(
      fc.json(),
      fc
        .record(
          { state: fc.jsonValue(), questions: fc.dictionary(fc.string(), questionish) },
          { requiredKeys: [] },
        )
        .map((b) => JSON.stringify(b)),
    );
    fc.assert(
      fc.property(body, (text) => {
        const result = parseText(text);
        if (result instanceof Error && !(result instanceof JsonInputError)) {
          expect(result.status).toBe(422);
          expect(result.message.length).toBeGreaterThan(0);
        } else if (result instanceof JsonInputError) {
          expect(result.message.length).toBeGreaterThan(0);
        } else {
          expect(result.questions.length).toBeGreaterThan(0);
        }
      }),
      { numRuns: 400, seed: 2026 },
    );
  });

  it("keeps every question key and option id, in the order written", () => {
    const ids = fc
      .uniqueArray(awkwardKey, {
        minLength: 2,
        maxLength: 16,
        selector: (id) => id.trim(),
      })
      .filter((list) => list.every((id) => id.trim().length > 0));
    const keys = fc.uniqueArray(awkwardKey, { minLength: 1, maxLength: 6 });
    fc.assert(
      fc.property(keys, ids, (questionKeys, optionIds) => {
        const criteria = objectText(optionIds.map((id) => [id, JSON.stringify(`option ${id}`)] as const));
        const questions = objectText(
          questionKeys.map(
            (key) => [key, `{"type":"choice","instructions":"Pick","criteria":${criteria}}`] as const,
          ),
        );
        const result = parseText(`{"state":"x","questions":${questions}}`);
        if (result instanceof Error) throw result;
        expect(result.questions.map((q) => q.key)).toEqual(questionKeys);
        for (const question of result.questions) {
          expect(question.options.map((o) => o.id)).toEqual(optionIds.map((id) => id.trim()));
        }
      }),
      { numRuns: 300, seed: 7 },
    );
  });

  it("refuses ids that collide after trimming, naming both", () => {
    const result = parseText(
      '{"state":"x","questions":{"q":{"type":"choice","instructions":"P","criteria":{"a":"A"," a ":"B"}}}}',
    );
    expect((result as ApiError).status).toBe(422);
    expect((result as ApiError).message).toMatch(/"a" and " a "/);
  });
});
