/**
 * `decide calibrate`: fits a policy's temperature and auto threshold from labelled decisions,
 * writes a readable HTML report and a JSON summary, and proposes the next policy version (written
 * only with --apply, never over an existing file).
 */
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { calibratePolicy } from "../shared/domain/calibration/calibrate.ts";
import { type MassRow, proposeMassFloor } from "../shared/domain/calibration/off-options.ts";
import { CONTENT_FREE_STATES, estimatePrior } from "../shared/domain/calibration/prior.ts";
import { agreementText, priorText, renderReport } from "../shared/domain/calibration/report.ts";
import type { LabelledLogits } from "../shared/domain/calibration/temperature.ts";
import type { ThresholdGoal } from "../shared/domain/calibration/threshold.ts";
import type { Policy } from "../shared/domain/policy/policy.ts";
import { PolicyRegistry } from "../shared/domain/policy/registry.ts";
import { type ReviewerAgreement, reviewerAgreement } from "../shared/domain/review.ts";
import { requiredFlag, UsageError } from "./args.ts";
import { calibrateCheck } from "./calibrate-check.ts";
import { goalOf } from "./calibrate-goal.ts";

export const calibrateUsage = `decide calibrate --input labelled.jsonl --policy ID [--target-accuracy 0.97 | --cost-wrong 20 --cost-review 1]
                 [--model file.gguf | --table DECISIONS_TABLE] [--prior --model file.gguf] [--policies-dir events/policies] [--out calibration-out] [--bins 10] [--binning equal-width|equal-mass] [--apply]

Each input line: {"label": "<option id>", "logits": [...]} (stored distribution, in the policy's option order),
or {"label", "probabilities": {"<id>": p}}, or {"label", "state": ...} scored with --model.
Rows that do not fit the policy are reported with their line numbers, not dropped silently.
--prior scores content-free items ("N/A", "[MASK]", "-") under the policy on --model, divides that
prior out of every decision and proposes it as the policy's "prior"; the report shows what it changes.
Writes <out>/<policy>.report.html and <out>/<policy>.summary.json; --apply writes the proposed
policy version into the policies folder.
Example: npx decide calibrate --input events/calibration/ticket-routing.labelled.jsonl --policy ticket-routing

decide calibrate --check --baseline <out>/<policy>.summary.json --recent recent-decisions.jsonl [--event-bus NAME]
Compares recent decision records (distribution, route, allowedTokenMass) with the calibration
baseline; exits 3 and emits "Calibration Drift" (when a bus is named) if they drifted.`;

interface Row {
  readonly line: number;
  readonly value: Record<string, unknown>;
}

/** Reads labelled rows into logits; rows that do not fit are returned as problems. */
async function readRows(
  path: string,
  policy: Policy,
  modelPath: string | undefined,
): Promise<{
  rows: LabelledLogits[];
  problems: { line: number; reason: string }[];
}> {
  const text = await readFile(path, "utf8").catch((error: unknown) => {
    throw new UsageError(`cannot read --input ${path}: ${(error as Error).message}`);
  });
  const ids = policy.options.map((o) => o.id);
  const problems: { line: number; reason: string }[] = [];
  const parsed: Row[] = [];
  text.split("\n").forEach((raw, i) => {
    if (!raw.trim()) return;
    try {
      parsed.push({ line: i + 1, value: JSON.parse(raw) as Record<string, unknown> });
    } catch (error) {
      problems.push({ line: i + 1, reason: `not valid JSON (${(error as Error).message})` });
    }
  });
  const rows: LabelledLogits[] = [];
  const needScoring: { row: Row; label: number }[] = [];
  for (const row of parsed) {
    const v = row.value;
    if (v.policy !== undefined && v.policy !== policy.id) {
      problems.push({ line: row.line, reason: `belongs to policy "${String(v.policy)}"` });
      continue;
    }
    const label = ids.indexOf(String(v.label));
    if (label < 0) {
      problems.push({
        line: row.line,
        reason: `label "${String(v.label)}" is not an option of ${policy.id} (${ids.join(", ")})`,
      });
      continue;
    }
    const group = typeof v.id === "string" ? v.id : `line-${row.line}`;
    if (Array.isArray(v.logits)) {
      if (
        v.logits.length !== ids.length ||
        !v.logits.every((x) => typeof x === "number" && Number.isFinite(x))
      ) {
        problems.push({
          line: row.line,
          reason: `logits must be ${ids.length} finite numbers in option order`,
        });
        continue;
      }
      rows.push({ logits: v.logits as number[], label, group });
    } else if (v.probabilities && typeof v.probabilities === "object") {
      const p = ids.map((id) => Number((v.probabilities as Record<string, unknown>)[id]));
      if (p.some((x) => !(x > 0))) {
        problems.push({ line: row.line, reason: "probabilities must give every option a positive value" });
        continue;
      }
      rows.push({ logits: p.map(Math.log), label, group });
    } else if (v.state !== undefined) {
      needScoring.push({ row, label });
    } else {
      problems.push({ line: row.line, reason: "needs logits, probabilities or a state" });
    }
  }
  if (needScoring.length > 0) {
    if (!modelPath)
      throw new UsageError(`${needScoring.length} rows hold a state: give --model to score them`);
    rows.push(...(await scoreStates(modelPath, policy, needScoring)));
  }
  return { rows, problems };
}

/** Scores labelled states with the local runtime, with a progress line. */
async function scoreStates(
  modelPath: string,
  policy: Policy,
  rows: { row: Row; label: number }[],
): Promise<LabelledLogits[]> {
  const { DecisionModel } = await import("../endpoint/runtime/decision-model.ts");
  const { DecisionScorer } = await import("../endpoint/scorer/scorer.ts");
  await using model = await DecisionModel.load({ modelPath });
  await using scorer = await DecisionScorer.create(model);
  const out: LabelledLogits[] = [];
  const started = performance.now();
  for (const [i, { row, label }] of rows.entries()) {
    const result = await scorer.score({
      state: row.value.state,
      layout: policy.layout,
      tokenMass: false,
      questions: [
        {
          key: "q",
          type: policy.type,
          instructions: policy.question,
          options: policy.options.map((o) => ({ id: o.id, description: o.description })),
        },
      ],
    });
    const answer = result.answers[0]!;
    // noul answers come back true-first: put the logits in the policy's order.
    out.push({
      logits: policy.options.map((o) => answer.logits[answer.optionIds.indexOf(o.id)]!),
      label,
      group: `line-${row.line}`,
    });
    const done = i + 1;
    const rate = done / ((performance.now() - started) / 1000);
    const line = `scored ${done}/${rows.length} (${rate.toFixed(1)}/s, ETA ${Math.round((rows.length - done) / rate)} s)`;
    if (process.stderr.isTTY) process.stderr.write(`\r${line}`);
    else if (done % 50 === 0 || done === rows.length) process.stderr.write(`${line}\n`);
  }
  if (process.stderr.isTTY) process.stderr.write("\n");
  return out;
}

/** Reviewed decisions of the policy's current version from the decisions table (the reviewers' labels). */
async function reviewedRows(
  table: string,
  policy: Policy,
): Promise<{
  rows: LabelledLogits[];
  problems: { line: number; reason: string }[];
  agreement: ReviewerAgreement;
  masses: MassRow[];
}> {
  const { awsOptions, decisionStore } = await import("./aws.ts");
  const store = decisionStore(table, awsOptions({}));
  const ids = policy.options.map((o) => o.id);
  const rows: LabelledLogits[] = [];
  const problems: { line: number; reason: string }[] = [];
  const records = (await store.listSince("reviewed", "1970-01-01T00:00:00.000Z")).filter(
    (r) => r.policyId === policy.id && r.policyVersion === policy.version,
  );
  for (const [i, record] of records.entries()) {
    const label = ids.indexOf(record.label ?? "");
    if (label < 0 || record.rawLogits?.length !== ids.length) {
      problems.push({
        line: i + 1,
        reason: `${record.itemId}: label "${record.label}" or its logits do not fit ${policy.id}@${policy.version}`,
      });
      continue;
    }
    rows.push({ logits: record.rawLogits, label, group: record.itemId });
  }
  // The allowed-token mass of each labelled decision, right or wrong by its raw choice.
  const masses = records
    .filter((r) => typeof r.allowedTokenMass === "number" && ids.includes(r.label ?? ""))
    .map((r) => ({ mass: r.allowedTokenMass as number, correct: r.chosen === r.label }));
  return { rows, problems, agreement: reviewerAgreement(records), masses };
}

/** Runs the command; returns the exit code. */
export async function calibrateCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      input: { type: "string" },
      policy: { type: "string" },
      model: { type: "string" },
      "policies-dir": { type: "string", default: "events/policies" },
      out: { type: "string", default: "calibration-out" },
      "target-accuracy": { type: "string" },
      "cost-wrong": { type: "string" },
      "cost-review": { type: "string" },
      bins: { type: "string", default: "10" },
      binning: { type: "string", default: "equal-width" },
      apply: { type: "boolean", default: false },
      check: { type: "boolean", default: false },
      baseline: { type: "string" },
      recent: { type: "string" },
      "event-bus": { type: "string" },
      table: { type: "string" },
      prior: { type: "boolean", default: false },
    },
    strict: true,
  });
  if (values.check) {
    return calibrateCheck({
      baseline: requiredFlag("baseline", values.baseline),
      recent: requiredFlag("recent", values.recent),
      eventBus: values["event-bus"] ?? process.env.EVENT_BUS_NAME,
    });
  }
  const policiesDir = values["policies-dir"]!;
  const registry = await PolicyRegistry.fromFolder(policiesDir);
  const policyId = requiredFlag("policy", values.policy);
  const policy = registry.current(policyId);
  if (!policy)
    throw new UsageError(`--policy: unknown policy "${policyId}" (known: ${registry.ids().join(", ")})`);
  const binning = values.binning;
  if (binning !== "equal-width" && binning !== "equal-mass")
    throw new UsageError(`--binning must be equal-width or equal-mass`);
  const bins = Number(values.bins);
  if (!Number.isInteger(bins) || bins < 2 || bins > 50)
    throw new UsageError("--bins must be an integer from 2 to 50");

  const { rows, problems, agreement, masses } = values.table
    ? await reviewedRows(values.table, policy)
    : {
        ...(await readRows(requiredFlag("input", values.input), policy, values.model)),
        agreement: undefined,
        masses: [] as MassRow[],
      };
  for (const p of problems) console.error(`line ${p.line}: skipped: ${p.reason}`);
  if (problems.length) console.error(`${problems.length} rows skipped, ${rows.length} used`);
  let prior: number[] | undefined;
  if (values.prior) {
    if (!values.model)
      throw new UsageError("--prior scores content-free items on the served model: give --model FILE");
    const scored = await scoreStates(
      values.model,
      policy,
      CONTENT_FREE_STATES.map((state, i) => ({ row: { line: i + 1, value: { state } }, label: 0 })),
    );
    prior = estimatePrior(scored.map((r) => r.logits));
    console.log(
      `${policy.id}: prior on content-free items (${CONTENT_FREE_STATES.map((s) => JSON.stringify(s)).join(", ")}): ${policy.options.map((o, k) => `${o.id} ${(prior![k]! * 100).toFixed(1)}%`).join(", ")}`,
    );
  }
  const summary = calibratePolicy(policy, rows, {
    goal: goalOf(values),
    bins,
    binning,
    ...(prior ? { prior } : {}),
  });

  await mkdir(values.out!, { recursive: true });
  const reportPath = join(values.out!, `${policy.id}.report.html`);
  const summaryPath = join(values.out!, `${policy.id}.summary.json`);
  const offOptions = masses.length > 0 ? proposeMassFloor(masses) : undefined;
  await writeFile(reportPath, renderReport(summary, agreement, offOptions));
  await writeFile(
    summaryPath,
    `${JSON.stringify({ ...summary, ...(agreement ? { reviewerAgreement: agreement } : {}), ...(offOptions ? { offOptions } : {}), skipped: problems }, null, 2)}\n`,
  );

  const proposed = summary.proposedPolicy;
  console.log(
    `${policy.id}: ${summary.labels} labels; ECE ${summary.raw.ece.toFixed(3)} raw -> ${summary.calibrated.ece.toFixed(3)} calibrated (out of fold)`,
  );
  console.log(`  temperature ${policy.temperature} -> ${proposed.temperature}`);
  console.log(
    `  autoThreshold ${policy.autoThreshold} -> ${proposed.autoThreshold} (${(summary.threshold.coverage * 100).toFixed(1)}% automated)`,
  );
  for (const note of summary.threshold.notes) console.log(`  note: ${note}`);
  const vector = summary.vectorScaling;
  console.log(
    `  vector scaling: out-of-fold NLL ${vector.outOfFoldNll.toFixed(4)} vs ${vector.temperatureOutOfFoldNll.toFixed(4)} (temperature alone): ${vector.chosen ? `proposed, offsets ${vector.bias.map((b) => b.toFixed(2)).join(", ")}, chosen option changes on ${(vector.changedChoices * 100).toFixed(1)}% of items` : "not proposed"}`,
  );
  if (summary.priorCorrection) console.log(`  ${priorText(summary.priorCorrection)}`);
  if (agreement) console.log(`  ${agreementText(agreement)}`);
  if (offOptions) console.log(`  off-options guard: ${offOptions.note}`);
  console.log(`report: ${reportPath}\nsummary: ${summaryPath}`);
  const policyPath = join(policiesDir, `${policy.id}.v${proposed.version}.json`);
  if (!values.apply) {
    console.log(
      `proposed policy version ${proposed.version} not written; rerun with --apply to write ${policyPath}`,
    );
    return 0;
  }
  if (existsSync(policyPath)) throw new UsageError(`${policyPath} exists already; refusing to overwrite it`);
  await writeFile(policyPath, `${JSON.stringify(proposed, null, 2)}\n`);
  console.log(`wrote ${policyPath}`);
  return 0;
}
