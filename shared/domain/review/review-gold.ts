/**
 * Gold items: decisions whose right answer the lead knows, mixed into the review queue unmarked
 * so that each reviewer's accuracy is measured on the same kind of work they do every day. A
 * certificate counts a reviewer's mistake as the model's; this is how the lead learns how often
 * that happens. What a gold file holds and its precise errors, what a gold item carries on its
 * record, and the accuracy per reviewer with its interval. Pure.
 */
import { wilsonInterval } from "../calibration/uncertainty.ts";

/** One reviewer's answer to a gold item. */
export interface GoldAnswer {
  readonly reviewerId: string;
  readonly reviewerName: string;
  readonly label: string;
  readonly at: string;
}

/** What a gold item's record carries: the known answer, and each reviewer's answer so far. */
export interface GoldMark {
  readonly answer: string;
  /** How many different reviewers answer it before it settles with the known answer. */
  readonly reviews: number;
  readonly loadedAt: string;
  readonly loadedBy: string;
  readonly answers: readonly GoldAnswer[];
}

/** One line of a gold file: an item already decided under `policy`, and its right answer. */
export interface GoldLine {
  readonly itemId: string;
  readonly policy: string;
  readonly answer: string;
  /** The policy version; the current one when absent. */
  readonly version?: number;
}

/** Most reviewers a gold item waits for; the default. */
export const GOLD_MAX_REVIEWS = 10;
export const GOLD_DEFAULT_REVIEWS = 3;

const FIELDS = ["itemId", "policy", "answer", "version"];

/** One parsed line, or what is wrong with it (field by field). */
function parseLine(text: string): GoldLine | string {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return `not JSON (${(error as Error).message})`;
  }
  if (value === null || typeof value !== "object" || Array.isArray(value))
    return `must be a JSON object with ${FIELDS.slice(0, 3).join(", ")}`;
  const v = value as Record<string, unknown>;
  const unknown = Object.keys(v).filter((k) => !FIELDS.includes(k));
  if (unknown.length)
    return `unknown field ${unknown.map((k) => `"${k}"`).join(", ")} (a gold line has ${FIELDS.join(", ")})`;
  if (typeof v.itemId !== "string" || v.itemId === "") return "itemId: must be the id of a decided item";
  if (typeof v.policy !== "string" || v.policy === "") return `policy: must name a policy`;
  if (typeof v.answer !== "string" || v.answer === "")
    return `answer: must be the id of one of the policy's options`;
  if (v.version !== undefined && !(Number.isInteger(v.version) && (v.version as number) > 0))
    return `version: must be a positive whole number`;
  return {
    itemId: v.itemId,
    policy: v.policy,
    answer: v.answer,
    ...(v.version !== undefined ? { version: v.version as number } : {}),
  };
}

/**
 * The lines of a gold file (JSON Lines, blank lines skipped), or every problem with its line
 * number; an item named twice is a problem on its second line.
 */
export function parseGoldFile(text: string): {
  lines: GoldLine[];
  problems: { line: number; reason: string }[];
} {
  const lines: GoldLine[] = [];
  const problems: { line: number; reason: string }[] = [];
  const seen = new Map<string, number>();
  for (const [i, raw] of text.split(/\r?\n/).entries()) {
    if (raw.trim() === "") continue;
    const parsed = parseLine(raw);
    if (typeof parsed === "string") {
      problems.push({ line: i + 1, reason: parsed });
      continue;
    }
    const key = `${parsed.policy}\u0000${parsed.itemId}`;
    const first = seen.get(key);
    if (first !== undefined)
      problems.push({ line: i + 1, reason: `itemId: "${parsed.itemId}" is already on line ${first}` });
    else {
      seen.set(key, i + 1);
      lines.push(parsed);
    }
  }
  return { lines, problems };
}

/** One reviewer's measured accuracy on gold items. */
export interface ReviewerAccuracy {
  readonly reviewerId: string;
  readonly reviewerName: string;
  /** Gold answers given, and how many were right. */
  readonly answered: number;
  readonly right: number;
  /** right / answered, and its 95% Wilson interval. */
  readonly accuracy: number;
  readonly interval: readonly [number, number];
}

/** Each reviewer's accuracy over the gold answers of `records`, most answers first. */
export function reviewerAccuracy(records: readonly { readonly gold?: GoldMark }[]): ReviewerAccuracy[] {
  const by = new Map<string, { name: string; answered: number; right: number }>();
  for (const r of records)
    for (const a of r.gold?.answers ?? []) {
      const one = by.get(a.reviewerId) ?? { name: a.reviewerName, answered: 0, right: 0 };
      one.answered++;
      if (a.label === r.gold!.answer) one.right++;
      by.set(a.reviewerId, one);
    }
  return [...by.entries()]
    .map(([reviewerId, { name, answered, right }]) => ({
      reviewerId,
      reviewerName: name,
      answered,
      right,
      accuracy: right / answered,
      interval: wilsonInterval(right, answered),
    }))
    .sort((a, b) => b.answered - a.answered || a.reviewerName.localeCompare(b.reviewerName));
}

/** Whether `reviewerId` has answered the gold item already. */
export function answeredGold(gold: GoldMark | undefined, reviewerId: string): boolean {
  return gold?.answers.some((a) => a.reviewerId === reviewerId) === true;
}
