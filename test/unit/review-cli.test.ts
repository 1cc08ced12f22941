/**
 * `decide review`: its flags refused before anything runs, and a gold file's problems printed
 * with the file and line, nothing loaded (exit 1).
 */
import { describe, expect, it } from "vitest";
import { reviewCommand } from "../../cli/review.ts";

const env = { DECISIONS_TABLE: "decisions" };

describe("decide review", () => {
  it("refuses unknown actions and bad flags with the flag named", () => {
    expect(() => reviewCommand.parse(["gild"], env)).toThrow(/"gild" is not gold or accuracy/);
    expect(() => reviewCommand.parse(["gold"], env)).toThrow("--file is required");
    expect(() => reviewCommand.parse(["gold", "--file", "g.jsonl", "--reviews", "11"], env)).toThrow(
      '--reviews must be an integer from 1 to 10, got "11"',
    );
    expect(() => reviewCommand.parse(["accuracy"], env)).toThrow("--policy is required");
    expect(() => reviewCommand.parse(["accuracy", "--policy", "p", "--max-auto-error", "2"], env)).toThrow(
      /--max-auto-error must be above 0 and below 1/,
    );
    expect(reviewCommand.parse(["gold", "--file", "g.jsonl", "--by", "Lead"], env)).toMatchObject({
      action: "gold",
      reviews: 3,
      by: "Lead",
      table: "decisions",
    });
  });

  it("prints each problem of a gold file with its line and loads nothing", () => {
    const options = reviewCommand.parse(["gold", "--file", "gold.jsonl"], env);
    const printed = reviewCommand.print(
      {
        action: "gold",
        load: {
          queued: 0,
          marked: 0,
          unchanged: 0,
          problems: [{ line: 3, reason: "answer: must be the id of one of the policy's options" }],
        },
      },
      options,
    );
    expect(printed.exitCode).toBe(1);
    expect(printed.error?.message).toBe(
      "no gold item loaded:\ngold.jsonl:3: answer: must be the id of one of the policy's options",
    );
    const accuracy = reviewCommand.print(
      {
        action: "accuracy",
        maxError: 0.02,
        reviewers: [
          {
            reviewerId: "a",
            reviewerName: "Ana",
            answered: 50,
            right: 49,
            accuracy: 0.98,
            interval: [0.895, 0.996],
          },
        ],
      },
      reviewCommand.parse(["accuracy", "--policy", "p"], env),
    );
    expect(accuracy.lines[0]).toBe("Ana: 49 of 50 gold items right (98.0%, 95% interval 89.5% to 99.6%)");
    expect(accuracy.lines.at(-1)).toMatch(
      /^reviewers at the 98\.0% measured on gold items: one review leaves 2\.0% of labels wrong/,
    );
  });
});
