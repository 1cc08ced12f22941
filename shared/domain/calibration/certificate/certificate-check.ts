/**
 * A certificate checked rather than believed: its own counts must give its own claim. The exact
 * (Clopper–Pearson) upper bound of `errors` wrong among `automated` at its `confidence` is
 * recomputed and must be at most its target; the bound it states must be at least that (rounded
 * as written) and at most the target; and the counts must fit each other (no more wrong than
 * automated, no more automated than labels, the coverage they imply). A certificate that fails is
 * refused by apply and never lets the decide path automate. A registered certificate's bound is
 * recomputed at its plan's level (`registered.level`), the level it was tested at. Whether its labels exist is a
 * separate check, made where the labels are at hand (`shared/use-cases/calibration/certificate-labels.ts`).
 */
import type { PolicyCertificate } from "../../policy/certificate-schema.ts";
import { clopperPearsonUpper } from "./binomial.ts";
import { type BoundEvidence, boundOf } from "./weighted-bound.ts";

const pct = (x: number) => `${Number((x * 100).toPrecision(4))}%`;

/** Relative slack for a bound written to four significant digits. */
const WRITTEN_PRECISION = 1e-3;

/**
 * Why weighted evidence cannot be what it says: units scaled to sum to 1 have a largest weight of
 * at least 1/units, wrong units weigh at most that each, and their squares at most that times
 * their sum.
 */
function evidenceProblem(e: BoundEvidence, automated: number, errors: number): string | undefined {
  if (e.units !== automated || e.errors !== errors)
    return `its evidence (${e.errors} wrong of ${e.units}) is not its counts (${errors} wrong of ${automated})`;
  if (e.method === "clopper-pearson") return undefined;
  const w = e.maxWeight;
  const y = e.weightedErrors;
  const v = e.squaredErrorWeights;
  if (w === undefined || y === undefined || v === undefined)
    return "its weighted evidence lacks a figure (weightedErrors, squaredErrorWeights, maxWeight)";
  const slack = 1 + 1e-6;
  if (w * e.units * slack < 1)
    return `its largest weight ${w} is below 1/${e.units}, the least the largest can be`;
  if (y > errors * w * slack || v > w * y * slack || errors > 0 !== y > 0)
    return "its weighted errors do not fit its wrong units and largest weight";
  return undefined;
}

/**
 * Why `certificate`'s counts do not give its claim, or undefined when they do. A certificate
 * that certified no threshold claims nothing, and only has to say so consistently.
 */
export function certificateCountsProblem(certificate: PolicyCertificate): string | undefined {
  const c = certificate;
  if (c.errors > c.automated)
    return `certificate invalid: ${c.errors} wrong of ${c.automated} automated is more wrong than automated`;
  if (c.automated > c.labels)
    return `certificate invalid: ${c.automated} automated of ${c.labels} labels is more than were labelled`;
  if (c.threshold === null) {
    if (c.automated > 0 || c.bound !== null)
      return "certificate invalid: it certifies no threshold, yet states automated items or a bound";
    return undefined;
  }
  const e = c.evidence;
  // A certificate of evenly weighted labels states its coverage as their share; a weighted one
  // estimates it from the weights, which it does not carry.
  if (!e && Math.abs(c.coverage - c.automated / c.labels) > 5e-5)
    return `certificate invalid: coverage ${c.coverage} is not ${c.automated} automated of ${c.labels} labels`;
  const inconsistent = e ? evidenceProblem(e, c.automated, c.errors) : undefined;
  if (inconsistent) return `certificate invalid: ${inconsistent}`;
  // A registered certificate's bound is at its plan's level (the claim's share of the budget).
  const at = c.registered?.level ?? c.confidence;
  const bound = e ? boundOf(e, at) : clopperPearsonUpper(c.errors, c.automated, at);
  const level = `${Number((at * 100).toFixed(2))}%`;
  if (bound > c.maxError)
    return `certificate invalid: ${c.errors} wrong of ${c.automated} automated gives a ${level} upper bound of ${pct(bound)}, above its target ${pct(c.maxError)}`;
  if (c.bound === null) return "certificate invalid: it certifies a threshold but states no bound";
  if (c.bound > c.maxError)
    return `certificate invalid: its bound ${pct(c.bound)} is above its own target ${pct(c.maxError)}`;
  if (c.bound < bound * (1 - WRITTEN_PRECISION))
    return `certificate invalid: it states a bound of ${pct(c.bound)} where ${c.errors} wrong of ${c.automated} automated gives ${pct(bound)} at ${level}`;
  return undefined;
}
