/**
 * What a calibration proposes once a cascade is accounted for: the threshold choice and its lines.
 * The terminal, the summary and the report tell one story: the pair certified over both models
 * leads, or "no certificate" when no pair qualifies; the first model's own certificate line is
 * shown only marked as covering that model alone (issue 40: a proposal carrying no certificate
 * printed the first model's line as if it were the policy's).
 */
import type { Policy } from "../policy/policy.ts";
import {
  type CascadeCalibration,
  type CascadeMade,
  calibrateCascade,
  cascadeSentence,
} from "./cascade-calibration.ts";
import type { CascadeRow } from "./certificate/certified-items.ts";
import type { ThresholdChoice, ThresholdGoal } from "./threshold.ts";

/**
 * The threshold choice a cascade makes: the pair certified over both models, or none. The first
 * model's own certificate line follows, marked as covering it alone, never leads (one story).
 */
function cascadeChoice(first: ThresholdChoice, cascade: CascadeCalibration): ThresholdChoice {
  const r = cascade.result;
  const [alone, ...rest] = first.notes;
  const notes = (lead: string) => [
    lead,
    ...(alone
      ? [`the first model alone (not what this version applies: ${cascade.model} acts too): ${alone}`]
      : []),
    ...rest,
    ...cascade.notes,
  ];
  if (!r.thresholds) {
    const lead = `no certificate: applying this sends every item to people (${cascadeSentence(cascade)})`;
    return {
      ...first,
      threshold: 1,
      coverage: 0,
      automatedAccuracy: Number.NaN,
      automatedAccuracyInterval: [0, 1],
      notes: notes(lead),
    };
  }
  return {
    ...first,
    threshold: r.thresholds[0],
    coverage: r.coverage,
    automatedAccuracy: r.automated ? 1 - r.errors / r.automated : Number.NaN,
    automatedAccuracyInterval: r.bound === null ? [0, 1] : [1 - r.bound, 1],
    notes: notes(cascadeSentence(cascade)),
  };
}

/**
 * The proposal and threshold choice once a cascade is accounted for: a two-model cascade certified
 * with `--max-auto-error` gets both thresholds ({@link calibrateCascade}); a longer one keeps the
 * first model's certificate, with a note that it covers nothing after the first model.
 */
export function withCascade(
  policy: Policy,
  proposed: Policy,
  threshold: ThresholdChoice,
  rows: readonly CascadeRow[],
  goal: ThresholdGoal,
  made: CascadeMade,
): { policy: Policy; threshold: ThresholdChoice; cascade?: CascadeCalibration } {
  const later = policy.cascade?.length ?? 0;
  if (goal.kind !== "max-auto-error" || later === 0) return { policy: proposed, threshold };
  if (later > 1) {
    const note = `${policy.id} asks ${1 + later} models: a cascade's certificate covers two, so this one speaks for the first model alone and the later models automate nothing under requireCertificate`;
    return { policy: proposed, threshold: { ...threshold, notes: [...threshold.notes, note] } };
  }
  if (!rows.some((r) => r.secondLogits)) {
    const model = policy.cascade![0]!.model;
    const note = `no labelled item carries the answer of ${model} (a labelled file gives the first model's only; in the decisions table, items decided before the batch lane asked it, and those the first model acted on, lack it): the certificate speaks for the first model alone; certify the cascade from the decisions table, asking ${model} for the ${rows.length} items first with  ${rescoreCommand(policy)}, then propose again`;
    return { policy: proposed, threshold: { ...threshold, notes: [...threshold.notes, note] } };
  }
  const cascade = calibrateCascade(proposed, rows, goal, made);
  const missing = missingSecondNote(policy, rows, cascade.cascade);
  const withMissing = missing
    ? { ...cascade.cascade, notes: [...cascade.cascade.notes, missing] }
    : cascade.cascade;
  return { ...cascade, cascade: withMissing, threshold: cascadeChoice(threshold, withMissing) };
}

/**
 * Where pairs could not be judged because items lack the second model's answer: one line naming
 * how many and which, and the command that asks the model for them (`decide calibrate --rescore`).
 */
function missingSecondNote(
  policy: Policy,
  rows: readonly CascadeRow[],
  cascade: CascadeCalibration,
): string | undefined {
  if (cascade.result.unjudgeable === 0) return undefined;
  const lacking = rows.filter((r) => !r.secondLogits);
  const named = lacking.slice(0, 3).map((r, i) => r.key ?? `#${i}`);
  const more = lacking.length > named.length ? ` and ${lacking.length - named.length} more` : "";
  return `${lacking.length} labelled or drawn items lack ${cascade.model}'s answer (${named.join(", ")}${more}), so ${cascade.result.unjudgeable} threshold pairs cannot be judged: ask ${cascade.model} for them with  ${rescoreCommand(policy)}, then propose again`;
}

/** The command that asks a cascade's second model about the items a certificate reads. */
function rescoreCommand(policy: Policy): string {
  return `npx decide calibrate --rescore --policy ${policy.id} --from-table "$DECISIONS_TABLE" --url <endpoint URL> (or --endpoint-name NAME)`;
}
