/**
 * Shadow scoring: a policy may name a candidate version that the decide path also scores for a
 * share of items, drawn by item id (a draw independent of the audit draw), so that a change is
 * seen on live traffic before it decides anything. The candidate's answer is stored on the
 * record beside the live one, with the route it would have taken; nothing acts on it.
 */
import { createHash } from "node:crypto";
import { calibratedProbabilities } from "./calibration/map.ts";
import type { Policy } from "./policy/policy.ts";
import { type Route, type RouteReason, routeDecision } from "./routing.ts";

/** The candidate's answer on one item, kept on the live record. */
export interface ShadowScore {
  /** The candidate version that was scored. */
  readonly policyVersion: number;
  /** Its calibrated probabilities by option id, in its option order. */
  readonly distribution?: Record<string, number>;
  readonly rawLogits?: number[];
  readonly chosen?: string;
  /** Where the candidate would have sent the item, and why (not acted on). */
  readonly route?: Route;
  readonly reason?: RouteReason;
  readonly topProbability?: number;
  readonly allowedTokenMass?: number | null;
  readonly promptSha256?: string;
  /** The model file and prompt layout that answered (the certificate is checked against them). */
  readonly modelSha256?: string;
  readonly promptVersion?: string;
  /** Why the candidate's certificate would not hold for this answer, when it carries or requires one. */
  readonly certificateProblem?: string;
  readonly latencyMs?: number;
  /** Why the candidate could not be scored; the live decision went ahead regardless. */
  readonly error?: string;
}

/** Deterministic shadow draw in [0, 1) from the item and the live version (salted apart from the audit draw). */
export function shadowDraw(itemId: string, policy: Pick<Policy, "id" | "version">): number {
  const digest = createHash("sha256").update(`shadow\n${policy.id}@${policy.version}\n${itemId}`).digest();
  return digest.readUInt32BE(0) / 2 ** 32;
}

/** Whether the live `policy` scores its shadow candidate on this item (never at share 0). */
export function inShadowSample(itemId: string, policy: Policy): boolean {
  const share = policy.shadow?.share ?? 0;
  return share > 0 && shadowDraw(itemId, policy) < share;
}

/**
 * What shadow scoring reads of an endpoint's answer (the contract's DecisionAnswer has these
 * fields; named here so that the decision record, which keeps a shadow score, imports no contract).
 */
export interface ShadowAnswer {
  readonly logits: number[];
  readonly allowedTokenMass: number | null;
  readonly promptSha256: string;
  /** What answered, where known: the certificate's model and layout check needs both. */
  readonly modelSha256?: string | undefined;
  readonly promptVersion?: string | undefined;
}

/**
 * The candidate's answer read as the live path reads its own: calibrated and routed, with the
 * same certificate check (model file and prompt layout, and `unverified`: why the certificate the
 * candidate requires did not verify on its labels), not acted on. For a cascade's later model,
 * `candidate` is that tier's view and `tier` names it with the whole policy, whose certificate
 * speaks for it (as on the decide path).
 */
export function shadowScore(
  candidate: Policy,
  answer: ShadowAnswer,
  itemId: string,
  latencyMs: number,
  unverified?: string,
  tier?: { readonly index: number; readonly whole: Policy },
): ShadowScore {
  const probabilities = calibratedProbabilities(answer.logits, candidate);
  const { modelSha256, promptVersion } = answer;
  const scoredBy =
    modelSha256 && promptVersion ? { modelSha256, promptVersion, tier: tier?.index ?? 0 } : undefined;
  const mass = answer.allowedTokenMass;
  const whole = tier?.whole ?? candidate;
  const routing = routeDecision(candidate, probabilities, itemId, mass, scoredBy, unverified, whole);
  return {
    policyVersion: candidate.version,
    distribution: Object.fromEntries(candidate.options.map((o, i) => [o.id, probabilities[i]!])),
    rawLogits: answer.logits,
    chosen: routing.chosen,
    route: routing.route,
    reason: routing.reason,
    topProbability: routing.topProbability,
    allowedTokenMass: answer.allowedTokenMass,
    promptSha256: answer.promptSha256,
    ...(modelSha256 ? { modelSha256 } : {}),
    ...(promptVersion ? { promptVersion } : {}),
    ...(routing.certificateProblem ? { certificateProblem: routing.certificateProblem } : {}),
    latencyMs: Math.round(latencyMs),
  };
}
