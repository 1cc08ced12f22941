/**
 * What a candidate would change, from a weighted sample of live decisions each paired with the
 * candidate's answer on the same item: the decisions that flip (by option pair), the route
 * changes, the share automated, escalations per day, and the candidate's wrong automatic actions
 * on the labelled part with an exact binomial upper bound. Weighted figures ("est.") scale the
 * sample to the decisions it stands for; counts are of sampled items.
 *
 * The audit draw is salted by policy version, so a candidate draws a different audit sample: an
 * audit sample counts as automatic in the route changes, the share automated and the labelled
 * check (it would have been automated but for the draw: `actedOn`, the definition every page
 * counts by), so that they show what the candidate changes and not which items happened to be
 * drawn; the share of audit samples is shown beside it. Escalations per day count every item
 * people get, audit samples included: that is their workload.
 */
import { actedOn, handlingOf, type Route, type RouteReason } from "../routing.ts";
import { binomialUpperBound } from "../statistics/beta.ts";

/** One side of a comparison: what a version did (or would do) with an item. */
export interface WhatIfDecision {
  readonly chosen: string;
  readonly route: Route;
  readonly reason: RouteReason;
  readonly topProbability: number;
}

/** A sampled item under the live version and the candidate. */
export interface WhatIfRow {
  readonly itemId: string;
  /** Live decisions this item stands for. */
  readonly weight: number;
  readonly live: WhatIfDecision;
  readonly candidate: WhatIfDecision;
  /** The reviewer's final label, when the item has one. */
  readonly label?: string;
}

/** A count of sampled items and the decisions they stand for. */
export interface Counted {
  readonly items: number;
  readonly estimated: number;
}

/** What the candidate would change. */
export interface WhatIfSummary {
  readonly sampled: number;
  /** Live decisions the sample stands for. */
  readonly decisions: number;
  /** Days the decisions span (at least 1), for the per-day figures. */
  readonly days: number;
  /** Items whose chosen option differs. */
  readonly flipped: Counted;
  readonly flips: readonly ({ readonly from: string; readonly to: string } & Counted)[];
  readonly toHuman: Counted;
  readonly toAuto: Counted;
  /** Share automated (audit samples included), live and candidate (weighted). */
  readonly coverage: { readonly live: number; readonly candidate: number };
  /** Of all decisions, the share drawn for audit out of those automated, live and candidate. */
  readonly auditSamples: { readonly live: number; readonly candidate: number };
  readonly escalationsPerDay: { readonly live: number; readonly candidate: number };
  /** The candidate's automatic actions on the labelled items, and how many were wrong. */
  readonly labelled: {
    readonly items: number;
    readonly automated: number;
    readonly wrong: number;
    /** Exact one-sided upper bound on the rate of wrong automatic actions, at `confidence`. */
    readonly upperBound: number;
    readonly confidence: number;
  };
}

/** Whether a decision is automatic, or drawn for audit out of the automatic ones (`actedOn`). */
export const automatic = (d: WhatIfDecision): boolean => actedOn(d);

/** Whether the item's chosen option or its handling (acted on or not) differs: a flip or a route change. */
export const changes = (r: WhatIfRow): boolean =>
  r.live.chosen !== r.candidate.chosen || automatic(r.live) !== automatic(r.candidate);

const drawn = (d: WhatIfDecision): boolean => handlingOf(d) === "audit_sample";

const counted = (rows: readonly WhatIfRow[]): Counted => ({
  items: rows.length,
  estimated: rows.reduce((sum, r) => sum + r.weight, 0),
});

/** Compares live and candidate over `rows`; `days` is the span the decisions came from. */
export function compareDecisions(rows: readonly WhatIfRow[], days: number, confidence = 0.95): WhatIfSummary {
  const total = counted(rows);
  const share = (pick: (r: WhatIfRow) => boolean) =>
    total.estimated > 0 ? counted(rows.filter(pick)).estimated / total.estimated : Number.NaN;
  const perDay = (pick: (r: WhatIfRow) => boolean) => counted(rows.filter(pick)).estimated / days;
  const pairs = new Map<string, WhatIfRow[]>();
  for (const r of rows.filter((r) => r.live.chosen !== r.candidate.chosen)) {
    const key = `${r.live.chosen}\n${r.candidate.chosen}`;
    const members = pairs.get(key);
    if (members) members.push(r);
    else pairs.set(key, [r]);
  }
  const flips = [...pairs.entries()]
    .map(([key, members]) => {
      const [from, to] = key.split("\n") as [string, string];
      return { from, to, ...counted(members) };
    })
    .sort((a, b) => b.estimated - a.estimated || a.from.localeCompare(b.from) || a.to.localeCompare(b.to));
  const labelled = rows.filter((r) => r.label !== undefined);
  const automated = labelled.filter((r) => automatic(r.candidate));
  const wrong = automated.filter((r) => r.candidate.chosen !== r.label).length;
  return {
    sampled: rows.length,
    decisions: total.estimated,
    days,
    flipped: counted(rows.filter((r) => r.live.chosen !== r.candidate.chosen)),
    flips,
    toHuman: counted(rows.filter((r) => automatic(r.live) && !automatic(r.candidate))),
    toAuto: counted(rows.filter((r) => !automatic(r.live) && automatic(r.candidate))),
    coverage: { live: share((r) => automatic(r.live)), candidate: share((r) => automatic(r.candidate)) },
    auditSamples: { live: share((r) => drawn(r.live)), candidate: share((r) => drawn(r.candidate)) },
    escalationsPerDay: {
      live: perDay((r) => r.live.route === "human"),
      candidate: perDay((r) => r.candidate.route === "human"),
    },
    labelled: {
      items: labelled.length,
      automated: automated.length,
      wrong,
      upperBound: binomialUpperBound(wrong, automated.length, confidence),
      confidence,
    },
  };
}
