/**
 * The off-options floor: when the option letters hold less of the model's probability (the
 * allowed-token mass) on wrong decisions than on right ones, a floor below which decisions go to
 * people catches wrong ones at little cost. Proposed only when it separates: it must send at
 * least a fifth of the wrong decisions to people while sending at most 5% of the right ones.
 */

/** One labelled decision's mass and whether the model was right. */
export interface MassRow {
  readonly mass: number;
  readonly correct: boolean;
}

/** What the masses of right and wrong decisions look like, and the floor proposed, if any. */
export interface MassFloorProposal {
  readonly rows: number;
  readonly medianCorrect: number | undefined;
  readonly medianIncorrect: number | undefined;
  /** The proposed `minAllowedTokenMass`, when one separates right from wrong. */
  readonly floor: number | undefined;
  /** Shares sent to people by the floor (of the wrong and of the right decisions). */
  readonly catchesIncorrect: number;
  readonly costsCorrect: number;
  /** One sentence for the report and the command's output. */
  readonly note: string;
}

const median = (values: readonly number[]) => {
  if (values.length === 0) return undefined;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
};
const pct = (x: number) => `${(x * 100).toFixed(1)}%`;

/** Proposes a floor from labelled rows (rows without a mass are left out by the caller). */
export function proposeMassFloor(
  rows: readonly MassRow[],
  maxCostCorrect = 0.05,
  minCatch = 0.2,
): MassFloorProposal {
  const right = rows.filter((r) => r.correct).map((r) => r.mass);
  const wrong = rows.filter((r) => !r.correct).map((r) => r.mass);
  const base = { rows: rows.length, medianCorrect: median(right), medianIncorrect: median(wrong) };
  if (right.length === 0 || wrong.length === 0)
    return {
      ...base,
      floor: undefined,
      catchesIncorrect: 0,
      costsCorrect: 0,
      note: "no floor: the labels need both right and wrong decisions with a mass",
    };
  let best: { floor: number; catches: number; costs: number } | undefined;
  // Candidate floors halfway between neighbouring observed masses: at or below the lower one
  // goes to people. Rounded to 3 significant digits where that keeps it between the two.
  const masses = [...new Set(rows.map((r) => r.mass))].sort((a, b) => a - b);
  for (const [i, candidate] of masses.entries()) {
    const next = masses[i + 1] ?? Math.min(1, candidate + 0.002);
    const middle = (candidate + next) / 2;
    const rounded = Number(middle.toPrecision(3));
    const floor = rounded > candidate && rounded < next ? rounded : middle;
    const costs = right.filter((m) => m < floor).length / right.length;
    const catches = wrong.filter((m) => m < floor).length / wrong.length;
    if (costs <= maxCostCorrect && (!best || catches > best.catches)) best = { floor, catches, costs };
  }
  if (!best || best.catches < minCatch)
    return {
      ...base,
      floor: undefined,
      catchesIncorrect: best?.catches ?? 0,
      costsCorrect: best?.costs ?? 0,
      note: `no floor proposed: the allowed-token mass does not separate right from wrong decisions (medians ${pct(base.medianCorrect!)} right, ${pct(base.medianIncorrect!)} wrong)`,
    };
  const { floor } = best;
  return {
    ...base,
    floor,
    catchesIncorrect: best.catches,
    costsCorrect: best.costs,
    note: `minAllowedTokenMass ${floor}: sends ${pct(best.catches)} of the wrong decisions and ${pct(best.costs)} of the right ones to people (medians ${pct(base.medianCorrect!)} right, ${pct(base.medianIncorrect!)} wrong)`,
  };
}
