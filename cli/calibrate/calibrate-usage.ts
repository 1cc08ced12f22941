/**
 * What `decide calibrate` accepts, as a reader and as the parser see it: the usage text (`--help`,
 * and docs/cli-reference.md, generated from it) and the flag table beside it, so whoever adds a
 * flag to one sees the other. Apart from calibrate.ts, which turns the parsed flags into one of
 * the command's modes and dispatches it.
 */
import type { parseArgs } from "node:util";
import { SCORING_FLAGS } from "./calibrate-scoring.ts";

/** The usage text of `decide calibrate`. */
export const calibrateUsage = `decide calibrate --input labelled.jsonl --policy ID
                 [--max-auto-error 0.02 [--confidence 0.95] | --target-accuracy 0.97 | --cost-wrong 20 --cost-review 1]
                 [--model file.gguf | --endpoint-name NAME | --url URL] [--concurrency 4] [--resume FILE]
                 [--prior] [--table DECISIONS_TABLE] [--policies-dir events/policies] [--out calibration-out]
                 [--bins 10] [--binning equal-width|equal-mass] [--apply]

Each input line: {"label": "<option id>", "logits": [...]} (stored distribution, in the policy's option order),
or {"label", "probabilities": {"<id>": p}}, or {"label", "state": ...}: states are scored as the pipeline
would score them, in process (--model), on the deployed SageMaker endpoint (--endpoint-name, with --region
and --profile), or on any System One server (--url http://host:8080). Remote scoring sends --concurrency
requests at a time with retries, shows progress, and keeps scored rows in --resume (default
<out>/<policy>.scored.jsonl) so that a stopped run resumes where it stopped.
Rows that do not fit the policy are reported with their line numbers, not dropped silently; a row may
name the "modelSha256" and "promptVersion" that scored it (scored states and table rows always do).
Every candidate (temperature; with --prior, the prior; vector scaling, with 20 labels per option) is
compared out of fold with the policy as it stands, and proposed only when a one-sided paired test on the
per-label NLL differences finds it better (gain ± standard error; 1% over the candidates tried);
otherwise "no change: ..." with the figures.
--max-auto-error E: the lowest auto threshold whose rate of wrong automatic actions is at most E with
--confidence (Learn then Test, exact binomial bound); the proposal carries the certificate. None
qualifies: every item stays with people, and the command says how many labels would be needed.
--prior scores content-free items ("N/A", "[MASK]", "-") on the same source, divides that prior out of
every decision and proposes it as the policy's "prior"; the report shows what it changes.
Writes <out>/<policy>.report.html and <out>/<policy>.summary.json; --apply writes the proposed
policy version into the policies folder.
Example: npx decide calibrate --input events/calibration/ticket-routing.labelled.jsonl --policy ticket-routing

decide calibrate --from-table DECISIONS_TABLE --propose [--policy ID] [--min-labels 200] [--out calibration-out] [--event-bus NAME]
Gathers the labels reviewers gave (in --from-table, else the DECISIONS_TABLE npm start exports)
since each policy version was calibrated; with at least --min-labels (10 or more; under 200 a
fifth of items stays with people), writes a proposed next version with its report under
<out>/<policy>/ and emits "Calibration Proposed" when a bus is named (--max-auto-error and
--confidence as above). Nothing is proposed when neither the calibration nor the threshold would
change. Changes nothing.

decide calibrate --plan --policy ID --max-auto-error 0.02 [--confidence 0.95] [--from-table T | --input labelled.jsonl]
                 [--request N [--queue-order first|by-time] [--url URL | --endpoint-name NAME | --model FILE]]
Before labelling: how many labels of decisions the policy would automate the certificate needs (with no
error, and at the error rate seen so far), how many of the labels held count toward it (an audit sample
drawn at 2% stands for 50 decisions; escalations are not decisions it would automate), and how long
the audit rate takes to supply the rest at the last day's volume. --request N draws a certification
sample of N such decisions, evenly across confidence bands, and puts it into the review queue (first by
default), each marked "certification sample" with its chance of being drawn. For a cascade, the drawn
items the first model decided lack the later model's answer: with --url, --endpoint-name or --model (as
--rescore takes them) they are re-scored straight after the draw; without, one line says how many and how.

decide calibrate --rescore --policy ID [--from-table T] (--url URL | --endpoint-name NAME | --model FILE) [--concurrency 4]
For a cascade: asks its second model (through the endpoint named; --model: that model's own file) about
the labelled and drawn decisions lacking its answer, and keeps each on its decision as a re-score (model,
time), never acted on: the cascade's certificate then judges the pairs that pass such items on.

decide calibrate --apply-proposal <out>/<policy>/v2-from-N-labels[-max-error-E-at-C]/policy.json [--policies-dir events/policies]
                 [--from-table DECISIONS_TABLE | --input labelled.jsonl] [--accept-no-automation]
The explicit step: checks that the proposal changes only calibration fields (temperature, prior,
optionBias, autoThreshold, predictionSet, minAllowedTokenMass, certificate, baseline, calibratedAt),
each within its documented range, refuses anything else naming the field, writes it as the policy's
next version file and prints what changed, field by field. A certificate must give its claim from its
own counts (the exact bound recomputed at its confidence, at most its target); with its labels at hand
(--from-table, else DECISIONS_TABLE when set; or the labelled --input file) it is recomputed on them and
refused unless they give it back. A proposal that sends every item to people (no threshold qualified)
where the current version automates is refused, naming the plan command (decide calibrate --plan),
unless --accept-no-automation is given.

decide calibrate --check --baseline <out>/<policy>.summary.json --recent recent-decisions.jsonl [--event-bus NAME]
Compares recent decision records (distribution, route, allowedTokenMass) with the calibration
baseline (rows of another policy, version or options are refused); exits 3 and emits "Calibration Drift" (when a bus is named) if they drifted.`;

/** The command's flags. */
export const CALIBRATE_FLAGS = {
  ...SCORING_FLAGS,
  input: { type: "string" },
  policy: { type: "string" },
  "policies-dir": { type: "string", default: "events/policies" },
  out: { type: "string", default: "calibration-out" },
  "target-accuracy": { type: "string" },
  "cost-wrong": { type: "string" },
  "cost-review": { type: "string" },
  "max-auto-error": { type: "string" },
  confidence: { type: "string" },
  bins: { type: "string", default: "10" },
  binning: { type: "string", default: "equal-width" },
  apply: { type: "boolean", default: false },
  check: { type: "boolean", default: false },
  baseline: { type: "string" },
  recent: { type: "string" },
  "event-bus": { type: "string" },
  table: { type: "string" },
  "from-table": { type: "string" },
  propose: { type: "boolean", default: false },
  "min-labels": { type: "string" },
  "apply-proposal": { type: "string" },
  "accept-no-automation": { type: "boolean", default: false },
  prior: { type: "boolean", default: false },
  plan: { type: "boolean", default: false },
  rescore: { type: "boolean", default: false },
  request: { type: "string" },
  "queue-order": { type: "string", default: "first" },
} as const;

/** The parsed flags. */
export type CalibrateFlags = ReturnType<
  typeof parseArgs<{ options: typeof CALIBRATE_FLAGS; strict: true }>
>["values"];
