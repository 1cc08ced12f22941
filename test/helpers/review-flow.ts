/**
 * Labelled sets shaped as the product collects them, for seeded checks of the certificate: decisions
 * of a content-moderation-like policy (two automatable options, one people always review, one out
 * of scope) scored by a model that is miscalibrated by a known temperature, routed by a live
 * threshold with band-dependent audit rates, and labelled as the review flow labels them: every
 * escalation, each audit sample at its band's rate, and optionally a certification sample drawn
 * evenly above a confidence. Each row carries its chance of being labelled, as the decisions
 * table's reader gives it. The truth of any threshold under any map is measured on fresh
 * decisions of the same model.
 */
import type { LabelKind } from "../../shared/domain/calibration/certificate/certificate-units.ts";
import { type CalibrationMap, calibratedProbabilities } from "../../shared/domain/calibration/map.ts";
import type { LabelledLogits } from "../../shared/domain/calibration/temperature.ts";
import { type Policy, parsePolicy } from "../../shared/domain/policy/policy.ts";
import { argmax, softmax } from "../../shared/domain/probability.ts";
import { SeededRandom } from "../../shared/domain/random.ts";

/** The policy: allow and restrict automatable, remove always to people, out_of_scope. */
export const MODERATION: Policy = parsePolicy({
  id: "moderation",
  version: 1,
  question: "What happens to this post?",
  type: "choice",
  options: [
    { id: "allow", description: "Allow", automate: true },
    { id: "restrict", description: "Restrict", automate: true },
    { id: "remove", description: "Remove", automate: false },
    { id: "out_of_scope", description: "Cannot tell", automate: false },
  ],
  outOfScopeOption: "out_of_scope",
  autoThreshold: 0.85,
  auditSampleRate: 0.05,
});

/** How the decisions are made and labelled. */
export interface FlowShape {
  /** Decisions in the window. */
  readonly decisions: number;
  /** The model's probabilities are softmax(logits / trueTemperature): 1 is calibrated. */
  readonly trueTemperature: number;
  /** The live version's threshold (on softmax of the raw logits). @default 0.85 */
  readonly liveThreshold?: number;
  /** Audit band edges and rates above the live threshold. @default [0.95, 0.99] and [0.2, 0.05, 0.02] */
  readonly auditEdges?: readonly number[];
  readonly auditRates?: readonly number[];
  /** Where the model is confidently wrong: above this live confidence, wrong at `rate` whatever it says. */
  readonly confidentlyWrong?: { readonly above: number; readonly rate: number };
  /** Where it is wrong more than it says: below this live confidence, wrong at least at `rate`. */
  readonly floorWrong?: { readonly below: number; readonly rate: number };
  /** A certification sample: this many drawn evenly from automatable decisions at or above `above`. */
  readonly certification?: { readonly above: number; readonly size: number };
  /** Near-duplicates: decisions come in groups of this size sharing logits and one label. @default 1 */
  readonly groupSize?: number;
}

/** One generated decision: raw logits, live confidence and choice, and its chance of being wrong. */
export interface Decision {
  readonly logits: number[];
  /** Live confidence (raw softmax) and chosen option. */
  readonly live: number;
  readonly chosen: number;
  /** Chance the chosen option is wrong. */
  readonly wrongChance: number;
}

/** Raw logits of one decision: a top option and a gap drawn so that confidences crowd near 1. */
export function decisionOf(random: SeededRandom, shape: FlowShape): Decision {
  const u = random.nextFloat();
  const top = u < 0.55 ? 0 : u < 0.8 ? 1 : u < 0.93 ? 2 : 3;
  const logits = [0, 0, 0, 0].map(() => random.nextFloat());
  logits[top] = (logits[top] ?? 0) + 1.5 + 8 * random.nextFloat() ** 0.5;
  const live = Math.max(...softmax(logits));
  const chosen = argmax(logits);
  const truthful = softmax(logits, shape.trueTemperature);
  let wrongChance = 1 - truthful[chosen]!;
  const cw = shape.confidentlyWrong;
  if (cw && live >= cw.above) wrongChance = cw.rate;
  const fw = shape.floorWrong;
  if (fw && live < fw.below) wrongChance = Math.max(wrongChance, fw.rate);
  return { logits, live, chosen, wrongChance };
}

const automatable = (option: number) => option <= 1;

/** The labelled rows of one seed, as the review flow collects them. */
export function reviewFlow(shape: FlowShape, seed: number): LabelledLogits[] {
  const random = new SeededRandom(seed * 7_919 + 13);
  const threshold = shape.liveThreshold ?? 0.85;
  const edges = shape.auditEdges ?? [0.95, 0.99];
  const rates = shape.auditRates ?? [0.2, 0.05, 0.02];
  const size = shape.groupSize ?? 1;
  const cert = shape.certification;
  const decided = Array.from({ length: Math.ceil(shape.decisions / size) }, (_, g) => {
    const d = decisionOf(random, shape);
    const escalated = !automatable(d.chosen) || d.live < threshold;
    const own = escalated ? 1 : rates[edges.filter((e) => d.live >= e).length]!;
    const inFrame = cert !== undefined && automatable(d.chosen) && d.live >= cert.above;
    return { d, group: `g${g}`, escalated, own, inFrame, audited: !escalated && random.nextFloat() < own };
  });
  // The certification sample: drawn evenly from its frame, independently of the audit draw.
  const frameSize = decided.filter((x) => x.inFrame).length;
  const rate = cert && frameSize > 0 ? Math.min(1, cert.size / frameSize) : 0;
  const rows: LabelledLogits[] = [];
  for (const x of decided) {
    const drawn = x.inFrame && random.nextFloat() < rate;
    if (!x.escalated && !x.audited && !drawn) continue;
    const kind: LabelKind = drawn ? "certification" : x.escalated ? "escalation" : "audit";
    // Its chance of a label by either draw (the reader's union of the two).
    const inclusionProbability = 1 - (1 - x.own) * (1 - (x.inFrame ? rate : 0));
    const wrong = random.nextFloat() < x.d.wrongChance;
    const label = wrong ? (x.d.chosen + 1 + Math.floor(random.nextFloat() * 3)) % 4 : x.d.chosen;
    for (let k = 0; k < size; k++)
      rows.push({
        logits: x.d.logits,
        label,
        group: x.group,
        key: `${x.group}/${k}`,
        kind,
        inclusionProbability,
      });
  }
  return rows;
}

const fresh = new WeakMap<FlowShape, Decision[]>();

/**
 * The true rate of wrong automatic actions at `threshold` under `map`, on 40,000 fresh decisions
 * of the same model (null when it automates none of them).
 */
export function trueRate(shape: FlowShape, map: CalibrationMap, threshold: number): number | null {
  let decisions = fresh.get(shape);
  if (!decisions) {
    const random = new SeededRandom(987_654_321);
    decisions = Array.from({ length: 40_000 }, () => decisionOf(random, shape));
    fresh.set(shape, decisions);
  }
  let automated = 0;
  let wrong = 0;
  for (const d of decisions) {
    const p = calibratedProbabilities(d.logits, map);
    const top = argmax(p);
    if (!automatable(top) || p[top]! < threshold) continue;
    automated++;
    wrong += d.wrongChance;
  }
  return automated > 0 ? wrong / automated : null;
}
