/**
 * What a calibration proposal changes, field by field, and whether apply may take it: a proposal
 * may differ from the current version only in the fields calibration owns (`ranges.ts`), each
 * inside its documented range, and a certificate it carries must hold for the version it is in and
 * give its claim from its own counts (`certificate-check.ts`).
 * Anything else (question, options, routing, audit settings) is refused by name. Pure: the
 * report, `--apply-proposal` and the proposing use case all run this one check.
 */
import type { Policy } from "../policy/policy.ts";
import { certificateCountsProblem } from "./certificate/certificate-check.ts";
import { certificateKind } from "./certificate/registered-kind.ts";
import {
  CALIBRATION_MAP_KEYS,
  type CalibrationMapKey,
  isCalibrationMapKey,
  mapFieldRange,
} from "./map-schema.ts";
import { calibrationSha256, certificateProblem, policyTextSha256 } from "./provenance.ts";
import { CALIBRATION_FIELDS, CALIBRATION_RANGES, type CalibrationField, inRange } from "./ranges.ts";

/** One field that differs. */
export interface FieldChange {
  readonly field: string;
  readonly current: unknown;
  readonly proposed: unknown;
}

/** The differences, and the reasons apply refuses (empty: it may be applied). */
export interface ProposalCheck {
  readonly changes: FieldChange[];
  readonly refusals: string[];
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/** The path of the first difference inside two values ("options.2.automate"), or "" for the top. */
function firstDifference(a: unknown, b: unknown, path: string): string {
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return path;
  if (Array.isArray(a) !== Array.isArray(b)) return path;
  if (Array.isArray(a) && Array.isArray(b) && a.length !== b.length)
    return `${path} (${a.length} -> ${b.length} entries)`;
  const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
  for (const key of keys) {
    const x = (a as Record<string, unknown>)[key];
    const y = (b as Record<string, unknown>)[key];
    if (!same(x, y)) return firstDifference(x, y, `${path}.${key}`);
  }
  return path;
}

const range = (r: { readonly min: number; readonly max: number }) => `${r.min} to ${r.max}`;
const numbers = (v: unknown): v is number[] => Array.isArray(v) && v.every((x) => typeof x === "number");

/**
 * Why a proposed value of a calibration map's field is outside its documented range, or undefined
 * when it is in: a single value, or each entry of a per-option field (and their sum, for a
 * distribution).
 */
function mapFieldProblem(field: CalibrationMapKey, value: unknown): string | undefined {
  const r = mapFieldRange(field);
  const outside = (what: string) => `${field}: ${what} is outside the documented range (${range(r)})`;
  if (value === undefined) return undefined;
  if (!numbers(value)) return inRange(value as number, r) ? undefined : outside(String(value));
  const bad = value.find((v) => !inRange(v, r));
  if (bad !== undefined) return outside(`${r.each} ${bad}`);
  if (r.sumTolerance === undefined) return undefined;
  const sum = value.reduce((s, v) => s + v, 0);
  return Math.abs(sum - 1) <= r.sumTolerance ? undefined : `${field}: sums to ${sum}, not 1`;
}

/** Why a proposed calibration field is out of its range, or undefined when it is in. */
function rangeProblem(field: CalibrationField, proposed: Policy): string | undefined {
  if (isCalibrationMapKey(field)) return mapFieldProblem(field, proposed[field]);
  const r = CALIBRATION_RANGES;
  const outside = (what: string, allowed: string) =>
    `${field}: ${what} is outside the documented range (${allowed})`;
  switch (field) {
    case "predictionSet": {
      const set = proposed.predictionSet;
      if (set === undefined) return undefined;
      if (!inRange(set.minProbability, r.predictionSetMinProbability))
        return outside(`minProbability ${set.minProbability}`, range(r.predictionSetMinProbability));
      return inRange(set.targetCoverage, r.predictionSetCoverage)
        ? undefined
        : outside(`targetCoverage ${set.targetCoverage}`, range(r.predictionSetCoverage));
    }
    case "baseline": {
      const mix = proposed.baseline?.optionMix;
      return mix === undefined || mix.length === proposed.options.length
        ? undefined
        : `${field}: optionMix needs one share per option (${proposed.options.length}), got ${mix.length}`;
    }
    case "certificate":
      return certificateMismatch(proposed);
    case "calibratedAt":
      return undefined;
  }
}

/** Why a proposal's certificate does not hold for the version it is in. */
function certificateMismatch(proposed: Policy): string | undefined {
  const c = proposed.certificate;
  if (c === undefined) return undefined;
  const invalid = certificateCountsProblem(c);
  if (invalid) return invalid;
  if (c.policySha256 !== policyTextSha256(proposed))
    return "certificate: it was made for another policy text";
  if (c.calibrationSha256 !== calibrationSha256(proposed))
    return "certificate: it was made for another calibration or auto threshold";
  if (c.threshold === null ? proposed.autoThreshold !== 1 : c.threshold !== proposed.autoThreshold)
    return `certificate: it certifies threshold ${c.threshold}, the version automates at ${proposed.autoThreshold}`;
  // A cascade's certificate names every tier: each must be the version's.
  const tiers = c.tiers && c.threshold !== null ? certificateProblem(proposed) : undefined;
  return tiers ? `certificate: ${tiers}` : undefined;
}

/** Why apply refuses a proposal's changes to the cascade's later tiers. */
function cascadeRefusals(current: Policy, proposed: Policy): string[] {
  const before = current.cascade ?? [];
  const after = proposed.cascade ?? [];
  const models = (tiers: typeof before) => tiers.map((t) => t.model).join(", ") || "none";
  if (before.length !== after.length || before.some((t, i) => t.model !== after[i]!.model))
    return [
      `cascade: a calibration proposal may not change its models or their order (${models(before)} -> ${models(after)}); write a new policy file for that`,
    ];
  const refusals: string[] = [];
  // A tier's calibration map is what a proposal may change of it, never its model or place.
  const owned = new Set<string>(CALIBRATION_MAP_KEYS);
  for (const [i, tier] of after.entries()) {
    const was = before[i]! as Record<string, unknown>;
    const now = tier as Record<string, unknown>;
    for (const key of new Set([...Object.keys(was), ...Object.keys(now)]))
      if (!same(was[key], now[key]) && !owned.has(key))
        refusals.push(
          `cascade.${i}.${key}: a calibration proposal may not change it (it may change a tier's ${CALIBRATION_MAP_KEYS.join(", ")}); write a new policy file for that`,
        );
    // The tier's calibration map, against the ranges the policy's own is held to.
    for (const field of CALIBRATION_MAP_KEYS) {
      const problem = mapFieldProblem(field, tier[field]);
      if (problem) refusals.push(`cascade.${i}.${problem}`);
    }
  }
  return refusals;
}

/** Compares a proposal with the current version (both parsed); `version` and `id` are checked by the caller. */
export function checkProposal(current: Policy, proposed: Policy): ProposalCheck {
  const changes: FieldChange[] = [];
  const refusals: string[] = [];
  const keys = new Set([...Object.keys(current), ...Object.keys(proposed)]);
  keys.delete("version");
  const owned = new Set<string>(CALIBRATION_FIELDS);
  for (const key of keys) {
    const before = (current as Record<string, unknown>)[key];
    const after = (proposed as Record<string, unknown>)[key];
    if (same(before, after)) continue;
    if (key === "cascade") {
      changes.push({ field: key, current: before, proposed: after });
      refusals.push(...cascadeRefusals(current, proposed));
      continue;
    }
    if (!owned.has(key)) {
      refusals.push(
        `${firstDifference(before, after, key)}: a calibration proposal may not change it (it may change ${CALIBRATION_FIELDS.join(", ")}); write a new policy file for that`,
      );
      continue;
    }
    changes.push({ field: key, current: before, proposed: after });
    const problem = rangeProblem(key as CalibrationField, proposed);
    if (problem) refusals.push(problem);
  }
  return { changes, refusals };
}

/** A field's value in a line of text: arrays and numbers as they are, objects shortened. */
export function fieldText(field: string, value: unknown): string {
  if (value === undefined) return "(none)";
  if (field === "certificate" && typeof value === "object" && value !== null) {
    const c = value as {
      maxError: number;
      confidence: number;
      threshold: number | null;
      labels: number;
      registered?: { sample: string };
    };
    return `≤ ${(c.maxError * 100).toFixed(1)}% wrong at ${Number((c.confidence * 100).toFixed(2))}% confidence, threshold ${c.threshold ?? "none"}, ${c.labels} labels (${certificateKind(c)})`;
  }
  if (numbers(value)) return `[${value.join(", ")}]`;
  return typeof value === "string" ? value : JSON.stringify(value);
}
