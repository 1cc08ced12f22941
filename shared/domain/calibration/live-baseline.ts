/**
 * The drift baseline a proposal carries, from live decisions rather than labelled ones: labelled
 * decisions are mostly escalations (less confident, escalated at any rate), so a baseline made of
 * them read an escalation rate of 0.74 or 1.0 where live traffic escalated about half, and a
 * drift check against it reported drift on normal traffic. A sample of the current version's
 * recent decisions is read again under the proposed version (its map, threshold and routing): its
 * mean confidence, escalation rate and option mix are what the proposed version would show.
 */
import type { Policy } from "../policy/policy.ts";
import { argmax } from "../probability.ts";
import { routeDecision } from "../routing.ts";
import { calibratedProbabilities } from "./map.ts";

/** A live decision as the baseline reads it. */
export interface LiveDecision {
  readonly itemId: string;
  readonly rawLogits: readonly number[];
  readonly allowedTokenMass?: number | null;
}

/** The baseline `proposed` would show on `live` decisions; undefined when there are none that fit. */
export function liveBaseline(
  proposed: Policy,
  live: readonly LiveDecision[],
): NonNullable<Policy["baseline"]> | undefined {
  const fit = live.filter((d) => d.rawLogits.length === proposed.options.length);
  if (fit.length === 0) return undefined;
  let confidence = 0;
  let escalated = 0;
  const mix = proposed.options.map(() => 0);
  for (const d of fit) {
    const p = calibratedProbabilities(d.rawLogits, proposed);
    const routing = routeDecision(proposed, p, d.itemId, d.allowedTokenMass);
    confidence += routing.topProbability;
    if (routing.route === "human") escalated++;
    mix[argmax(p)]!++;
  }
  const round = (x: number) => Number(x.toFixed(4));
  return {
    meanConfidence: round(confidence / fit.length),
    escalationRate: round(escalated / fit.length),
    optionMix: mix.map((m) => round(m / fit.length)),
  };
}
