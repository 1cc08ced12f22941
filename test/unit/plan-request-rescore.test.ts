/**
 * What `decide calibrate --plan --request N` prints about a cascade's drawn items that lack the
 * later model's answer (issue 40): without a source, exactly one line naming how many lack which
 * model's answer and the full command that gets it; with one, what the re-score did (exit 1 when
 * an item was not re-scored). The source flags are taken with `--request` only, and parse into
 * the plan's options.
 */
import { describe, expect, it } from "vitest";
import { calibrateCommand } from "../../cli/calibrate/calibrate.ts";
import { type DrawnRescore, drawnRescoreLines } from "../../cli/calibrate/calibrate-rescore.ts";
import { parsePolicy } from "../../shared/domain/policy/policy.ts";
import { decideCalibrate } from "../helpers/lead-flow.ts";
import { MODERATION } from "../helpers/review-flow.ts";

const POLICY = parsePolicy({ ...MODERATION, cascade: [{ model: "demo-large", autoThreshold: 0.85 }] });
const DRAWN: DrawnRescore = {
  policy: POLICY,
  table: "decisions-prod",
  policiesDir: "events/policies",
  model: "demo-large",
  lacking: 37,
};

describe("the line about drawn items lacking the later model's answer", () => {
  it("names how many lack which model's answer and the full command, in one line", () => {
    expect(drawnRescoreLines(DRAWN)).toEqual({
      lines: [
        "  37 drawn items lack demo-large's answer (the first model decided them; the registered plan does not need it, as it judges each drawn item by the model that acted; it serves a learn-then-test certificate on the labels held and the plan's reading of later labels): get it with  npx decide calibrate --rescore --policy moderation --from-table decisions-prod --url http://localhost:8080 (the local endpoint; deployed: --endpoint-name NAME instead of --url)",
      ],
      exitCode: 0,
    });
    const one = drawnRescoreLines({ ...DRAWN, lacking: 1, policiesDir: "my/policies" }).lines;
    expect(one).toHaveLength(1);
    expect(one[0]).toMatch(/^ {2}1 drawn item lacks demo-large's answer \(the first model decided it;/);
    expect(one[0]).toContain("--rescore --policy moderation --policies-dir my/policies --from-table");
    expect(drawnRescoreLines({ ...DRAWN, lacking: 0 }).lines).toEqual([]);
  });

  it("says what the re-score did, and exits 1 when an item was not re-scored", () => {
    const run = {
      policy: "moderation@1",
      source: "http://localhost:8080",
      rescored: {
        model: "demo-large",
        considered: 40,
        answered: 3,
        rescored: 36,
        failed: [{ itemId: "P-9", reason: "no stored state to send" }],
      },
    };
    const printed = drawnRescoreLines({ ...DRAWN, run });
    expect(printed.lines).toEqual([
      "  re-scored 36 drawn items with demo-large on http://localhost:8080 (40 drawn, 3 had its answer already); each kept on its decision as a re-score, never acted on",
      "  not re-scored: P-9: no stored state to send",
    ]);
    expect(printed.exitCode).toBe(1);
  });
});

describe("the source flags on --plan", () => {
  const plan = ["--plan", "--policy", "content-moderation", "--max-auto-error", "0.02", "--from-table", "T"];

  it("parse into the plan's options with --request", () => {
    const options = calibrateCommand.parse([...plan, "--request", "5", "--url", "http://localhost:8080"], {});
    expect(options).toMatchObject({ mode: "plan", request: 5, scoring: { url: "http://localhost:8080" } });
  });

  it("are refused without --request, before the table is read", async () => {
    await expect(decideCalibrate([...plan, "--url", "http://localhost:8080"])).rejects.toThrow(
      "--plan --url re-scores a cascade's drawn items: give it with --request N",
    );
  });
});
