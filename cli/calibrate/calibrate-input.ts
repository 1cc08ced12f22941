/**
 * `decide calibrate --input FILE`: the labelled rows of a JSONL file, as logits (stored
 * distributions) or as states still to be scored; rows that do not fit the policy come back as
 * problems with their line numbers, never dropped silently. A row may name its `group` of
 * near-duplicates and its `inclusionProbability` (its chance of having been labelled); without
 * one, the file is read as an even random sample.
 */
import type { MassRow } from "../../shared/domain/calibration/off-options.ts";
import { CONTENT_FREE_STATES, estimatePrior } from "../../shared/domain/calibration/prior.ts";
import type { LabelledLogits } from "../../shared/domain/calibration/temperature.ts";
import { readLines } from "../../shared/domain/input/lines.ts";
import type { Policy } from "../../shared/domain/policy/policy.ts";
import type { ReviewerAgreement } from "../../shared/domain/review/review.ts";
import { UsageError } from "../args.ts";
import { openInput } from "../input-file.ts";
import { openScoringSource, type ScoringFlags, scoreStateRows } from "./calibrate-scoring.ts";
import type { StateRow } from "./calibrate-source.ts";

/** The labelled rows of one calibration, wherever they came from. */
export interface CalibrationInput {
  readonly rows: LabelledLogits[];
  readonly problems: { line: number; reason: string }[];
  /** Labelled states still to be scored (input files only). */
  readonly states: StateRow[];
  /** Reviewer agreement (decisions table only). */
  readonly agreement: ReviewerAgreement | undefined;
  /** The allowed-token mass of each labelled decision (decisions table only). */
  readonly masses: MassRow[];
  /** The prior on content-free items (--prior). */
  readonly prior?: number[];
  /** The lowest threshold the labels may certify (decisions table only: `thresholdFloor`). */
  readonly floor?: number;
  /** Drawn certification samples not labelled (decisions table only): the certificate counts them as wrong. */
  readonly missing?: LabelledLogits[];
}

interface Row {
  readonly line: number;
  readonly value: Record<string, unknown>;
}

/**
 * A row's group of near-duplicates (its `group`, else its `id`, else its line: they count once
 * in a certificate) and its chance of having been labelled, when it gives one.
 */
function selectionOfRow(row: Row): { group: string; pi?: number; problem?: string } {
  const v = row.value;
  const group =
    typeof v.group === "string" && v.group !== ""
      ? `group:${v.group}`
      : typeof v.id === "string"
        ? v.id
        : `line-${row.line}`;
  const pi = v.inclusionProbability;
  if (pi === undefined) return { group };
  if (!(typeof pi === "number" && pi > 0 && pi <= 1))
    return { group, problem: "inclusionProbability must be a number in (0, 1]" };
  return { group, pi };
}

/** Reads labelled rows into logits; rows that do not fit are returned as problems. */
export async function readRows(
  path: string,
  policy: Policy,
): Promise<{
  rows: LabelledLogits[];
  problems: { line: number; reason: string }[];
  states: StateRow[];
}> {
  const ids = policy.options.map((o) => o.id);
  const problems: { line: number; reason: string }[] = [];
  const parsed: Row[] = [];
  // The one input reader: a byte-order mark, CRLF, invalid UTF-8 and over-long lines by line.
  for await (const { line, text, error } of readLines(await openInput(path, `--input ${path}`))) {
    if (error !== undefined) problems.push({ line, reason: error });
    else if (text.trim()) {
      try {
        const value: unknown = JSON.parse(text);
        if (typeof value === "object" && value !== null && !Array.isArray(value))
          parsed.push({ line, value: value as Record<string, unknown> });
        else problems.push({ line, reason: "not a JSON object" });
      } catch (error) {
        problems.push({ line, reason: `not valid JSON (${(error as Error).message})` });
      }
    }
  }
  const rows: LabelledLogits[] = [];
  const states: StateRow[] = [];
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
    const { group, pi, problem } = selectionOfRow(row);
    if (problem) {
      problems.push({ line: row.line, reason: problem });
      continue;
    }
    // Where the logits came from, when the row says (a certificate is bound to them).
    const scoredBy = {
      ...(typeof v.modelSha256 === "string" ? { modelSha256: v.modelSha256 } : {}),
      ...(typeof v.promptVersion === "string" ? { promptVersion: v.promptVersion } : {}),
      // A row's chance of having been labelled, when the file says (else it stands for itself).
      ...(typeof pi === "number" ? { inclusionProbability: pi } : {}),
    };
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
      rows.push({ logits: v.logits as number[], label, group, ...scoredBy });
    } else if (v.probabilities && typeof v.probabilities === "object") {
      const p = ids.map((id) => Number((v.probabilities as Record<string, unknown>)[id]));
      if (p.some((x) => !(x > 0))) {
        problems.push({ line: row.line, reason: "probabilities must give every option a positive value" });
        continue;
      }
      rows.push({ logits: p.map(Math.log), label, group, ...scoredBy });
    } else if (v.state !== undefined) {
      states.push({ line: row.line, state: v.state, label, group });
    } else {
      problems.push({ line: row.line, reason: "needs logits, probabilities or a state" });
    }
  }
  return { rows, problems, states };
}

/**
 * Scores the input's states on the source the flags name (kept in `resume`), and with --prior
 * the content-free items too; returns the input with their rows and problems added.
 */
export async function scoreStatesAndPrior(
  flags: ScoringFlags & { prior: boolean },
  policy: Policy,
  input: CalibrationInput,
  resume: string,
): Promise<CalibrationInput> {
  const source = await openScoringSource(flags);
  if (!source) {
    const why = flags.prior
      ? "--prior scores content-free items"
      : `${input.states.length} rows hold a state`;
    throw new UsageError(`${why}: give --model FILE, --endpoint-name NAME or --url URL to score them`);
  }
  try {
    const scored = await scoreStateRows(source, policy, input.states, resume);
    const rows = [...input.rows, ...scored.rows];
    const problems = [...input.problems, ...scored.problems];
    if (!flags.prior) return { ...input, rows, problems, states: [] };
    const free = CONTENT_FREE_STATES.map((state, i) => ({
      line: -(i + 1),
      state,
      label: 0,
      group: `free-${i}`,
    }));
    const prior = estimatePrior(
      (await scoreStateRows(source, policy, free, undefined)).rows.map((r) => r.logits),
    );
    console.log(
      `${policy.id}: prior on content-free items (${CONTENT_FREE_STATES.map((s) => JSON.stringify(s)).join(", ")}): ${policy.options.map((o, k) => `${o.id} ${(prior[k]! * 100).toFixed(1)}%`).join(", ")}`,
    );
    return { ...input, rows, problems, states: [], prior };
  } finally {
    await source.close();
  }
}
