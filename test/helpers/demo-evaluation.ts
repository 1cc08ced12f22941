/**
 * Scores the demo model's held-back items (events/items/demo-heldout.jsonl: hand-written, never
 * used for fitting) through the real scorer and routing, and counts how a newcomer would see it:
 * clear items that are automated and right, clear items the policy sends to people by design
 * (remove, incomplete, out of scope) that the model is nonetheless sure and right about, and
 * ambiguous items that go to people. Used by the demo-model test and `npm run bench:demo`.
 */
import { readFile } from "node:fs/promises";
import { join } from "node:path";
import { DecisionModel } from "../../endpoint/runtime/decision-model.ts";
import { DecisionScorer } from "../../endpoint/scorer/scorer.ts";
import type { Policy } from "../../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { routeDecision } from "../../shared/domain/routing.ts";
import { decisionRequest } from "./decision-requests.ts";
import { REPO_ROOT } from "./models.ts";

/** One held-back row and what the model did with it. */
export interface HeldOutResult {
  readonly policy: string;
  readonly label: string;
  readonly clear: boolean;
  readonly chosen: string;
  readonly top: number;
  readonly route: "auto" | "human";
  /** Sure (at or above the policy's threshold) and right, whatever the option's automate flag. */
  readonly sureAndRight: boolean;
}

/** Counts per policy and in total. */
export interface DemoFigures {
  readonly policy: string;
  readonly clear: number;
  /** Clear items handled as a person would want: automated and right, or sure and right on an option that always goes to people. */
  readonly clearHandled: number;
  readonly clearAutomatedRight: number;
  readonly clearAutomatable: number;
  readonly ambiguous: number;
  readonly ambiguousEscalated: number;
  readonly wrongAutomated: number;
}

/** Scores `state` as the decide function would under `policy`: its one question, its layout. */
export async function scoreUnderPolicy(scorer: DecisionScorer, policy: Policy, state: unknown) {
  const result = await scorer.score(
    decisionRequest({
      state,
      layout: policy.layout,
      questions: [
        {
          key: "q",
          type: policy.type,
          instructions: policy.question,
          options: policy.options.map(({ id, description }) => ({ id, description })),
        },
      ],
    }),
  );
  return result.answers[0]!;
}

/** Scores every held-back row on the model at `modelPath`. */
export async function scoreHeldOut(modelPath: string, file = "demo-heldout.jsonl"): Promise<HeldOutResult[]> {
  const policies = await PolicyRegistry.fromFolder(join(REPO_ROOT, "events", "policies"));
  const rows = (await readFile(join(REPO_ROOT, "events", "items", file), "utf8"))
    .split("\n")
    .filter((line) => line.trim())
    .map((line) => JSON.parse(line) as { policy: string; label: string; clear: boolean; state: unknown });
  const model = await DecisionModel.load({ modelPath, threads: 2 });
  const scorer = await DecisionScorer.create(model);
  try {
    const results: HeldOutResult[] = [];
    for (const [index, row] of rows.entries()) {
      const policy = policies.current(row.policy);
      if (!policy) throw new Error(`${file} line ${index + 1}: unknown policy ${row.policy}`);
      const { probabilities } = await scoreUnderPolicy(scorer, policy, row.state);
      // Audit sampling is a draw per item id; the figures are about the model, so no id is sampled.
      const routing = routeDecision({ ...policy, auditSampleRate: 0 }, probabilities, `heldout-${index}`);
      results.push({
        policy: row.policy,
        label: row.label,
        clear: row.clear,
        chosen: routing.chosen,
        top: routing.topProbability,
        route: routing.route,
        sureAndRight: routing.chosen === row.label && routing.topProbability >= policy.autoThreshold,
      });
    }
    return results;
  } finally {
    await scorer.dispose();
    await model.dispose();
  }
}

/** Per-policy figures, then a total row (policy "all"). */
export function demoFigures(results: readonly HeldOutResult[]): DemoFigures[] {
  const figuresOf = (policy: string, rows: readonly HeldOutResult[]): DemoFigures => {
    const clear = rows.filter((r) => r.clear);
    const ambiguous = rows.filter((r) => !r.clear);
    return {
      policy,
      clear: clear.length,
      clearHandled: clear.filter((r) => r.sureAndRight).length,
      clearAutomatedRight: clear.filter((r) => r.route === "auto" && r.chosen === r.label).length,
      clearAutomatable: clear.filter((r) => r.sureAndRight && r.route === "auto").length,
      ambiguous: ambiguous.length,
      ambiguousEscalated: ambiguous.filter((r) => r.route === "human").length,
      wrongAutomated: rows.filter((r) => r.route === "auto" && r.chosen !== r.label).length,
    };
  };
  const policies = [...new Set(results.map((r) => r.policy))];
  return [
    ...policies.map((p) =>
      figuresOf(
        p,
        results.filter((r) => r.policy === p),
      ),
    ),
    figuresOf("all", results),
  ];
}
