/**
 * Generated decisions of a two-tier cascade whose tiers' error rates are known, labelled as the
 * product labels them, for the cascade certificate's test and bench. Both tiers are calibrated
 * (a tier with top probability c is wrong with chance 1 − c, independently of the other tier):
 * the first's c = 1 − u³/2 (the single-tier certificate's generator), the second's c = 1 − v⁶/2,
 * surer and so right more often on what the first passes on; each tier's top option is one that
 * is never automated 5% of the time. In production the first tier acted at 0.99 or above, so the
 * second was asked only of the rest (its answer is absent on the others), and the second acted
 * at 0.9 or above.
 */
import type {
  CascadeItem,
  TierJudgement,
} from "../../shared/domain/calibration/certificate/cascade-certificate.ts";
import type { CertifiedItem } from "../../shared/domain/calibration/certificate/certificate.ts";
import { SeededRandom } from "../../shared/domain/random.ts";

/** The production thresholds the decisions were routed under, first tier and second. */
const PRODUCTION = [0.99, 0.9] as const;

interface Decision {
  readonly first: TierJudgement;
  readonly second: TierJudgement;
}

function tier(random: SeededRandom, power: number): TierJudgement {
  const confidence = 1 - random.nextFloat() ** power / 2;
  return { confidence, wrong: random.nextFloat() < 1 - confidence, automatable: random.nextFloat() >= 0.05 };
}

function decision(random: SeededRandom): Decision {
  return { first: tier(random, 3), second: tier(random, 6) };
}

const actsAt = (t: TierJudgement, threshold: number) => t.automatable && t.confidence >= threshold;

/** How labels are drawn: every decision alike, or escalations all and automated ones at an audit rate. */
export type LabelDraw = { readonly kind: "uniform" } | { readonly kind: "audit"; readonly rate: number };

/**
 * `n` decisions labelled as drawn: uniformly (each labelled, π = 1), or escalations (neither tier
 * acted in production) all and automated decisions at `rate`, each with its π.
 */
export function cascadeLabels(n: number, seed: number, draw: LabelDraw = { kind: "uniform" }): CascadeItem[] {
  const random = new SeededRandom(seed);
  const out: CascadeItem[] = [];
  for (let i = 0; i < n; i++) {
    const d = decision(random);
    const firstActed = actsAt(d.first, PRODUCTION[0]);
    const escalated = !firstActed && !actsAt(d.second, PRODUCTION[1]);
    const pi = draw.kind === "audit" && !escalated ? draw.rate : 1;
    if (random.nextFloat() >= pi) continue;
    out.push({
      first: d.first,
      ...(firstActed ? {} : { second: d.second }),
      inclusionProbability: pi,
      kind: draw.kind === "uniform" ? "certification" : escalated ? "escalation" : "audit",
    });
  }
  return out;
}

/** The first tier's view of the same labels, for the single-tier certificate. */
export function firstTierItems(items: readonly CascadeItem[]): CertifiedItem[] {
  return items.map((i) => ({
    ...i.first,
    ...(i.inclusionProbability !== undefined ? { inclusionProbability: i.inclusionProbability } : {}),
  }));
}

/** The true rate of wrong automatic actions and the share automated, over a large population. */
export interface TruthTable {
  /** Of the cascade at (t1, t2); t2 above 1: the first tier alone. */
  readonly at: (t1: number, t2: number) => { readonly rate: number; readonly coverage: number };
}

/**
 * The truth, as expected errors (1 − c of the acting tier) over `n` decisions of a fixed seed:
 * its standard error at the rates tested is well under a tenth of a point.
 */
export function cascadeTruth(n = 200_000): TruthTable {
  const random = new SeededRandom(0x5eed);
  const all = Array.from({ length: n }, () => decision(random));
  return {
    at(t1, t2) {
      let automated = 0;
      let wrong = 0;
      for (const d of all) {
        const acting = actsAt(d.first, t1) ? d.first : actsAt(d.second, t2) ? d.second : undefined;
        if (!acting) continue;
        automated++;
        wrong += 1 - acting.confidence;
      }
      return { rate: automated ? wrong / automated : 0, coverage: automated / n };
    },
  };
}
