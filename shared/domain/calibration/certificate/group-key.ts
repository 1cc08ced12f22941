/**
 * Near-duplicates, grouped by the product itself: a certificate counts each group of
 * near-duplicates once (they share one label, so ten copies are one piece of evidence, not ten).
 * Producers that send `metadata.group` name their groups; most send nothing, so the product
 * forms a key from the item's own text, and a reviewer can mark one item a duplicate of another.
 * Pure: the key of a record depends on that record alone, so the same labels read back later
 * (a certificate's recheck) group the same way.
 */
import { createHash } from "node:crypto";
import type { DecisionRecord } from "../../decision-record.ts";

/** What a record's group is read from. */
export type GroupSource = Pick<DecisionRecord, "itemId" | "state" | "metadata" | "group">;

const URL = /\b(?:https?:\/\/|www\.)\S+/gu;
/** A number, with its thousands separators and decimals: "1,234.50" is one number. */
const NUMBER = /\p{N}+(?:[.,]\p{N}+)*/gu;
const NOT_WORD = /[^\p{L}\p{N}]+/gu;

/** The string and number leaves of a state, in key order (the keys themselves are not text). */
function leaves(value: unknown, out: string[]): string[] {
  if (typeof value === "string") out.push(value);
  else if (typeof value === "number" || typeof value === "boolean") out.push(String(value));
  else if (Array.isArray(value)) for (const v of value) leaves(v, out);
  else if (value !== null && typeof value === "object")
    for (const key of Object.keys(value).sort()) leaves((value as Record<string, unknown>)[key], out);
  return out;
}

/**
 * The normalised text of a state: its string and number leaves (an object's in key order) joined
 * by spaces; Unicode compatibility-folded (NFKC) and lower-cased; every URL folded to "url" and
 * every number (digits, with separators) to "0"; every run of characters that are neither letters
 * nor digits (punctuation, symbols, emoji, whitespace) to one space; trimmed.
 */
export function normalisedText(state: unknown): string {
  return leaves(state, [])
    .join(" ")
    .normalize("NFKC")
    .toLowerCase()
    .replace(URL, " url ")
    .replace(NUMBER, "0")
    .replace(NOT_WORD, " ")
    .trim();
}

/**
 * The unit a record counts in, first that applies: the group a reviewer marked it into (stored
 * as a unit key); the producer's `metadata.group` ("group:" and its name); the normalised text of
 * its state ("text:" and 16 hex digits of its SHA-256), unless that text is empty; the item alone.
 */
export function groupKeyOf(record: GroupSource): string {
  if (typeof record.group === "string" && record.group !== "") return record.group;
  const named = record.metadata?.group;
  if (typeof named === "string" && named !== "") return `group:${named}`;
  const text = normalisedText(record.state);
  if (text === "") return record.itemId;
  return `text:${createHash("sha256").update(text).digest("hex").slice(0, 16)}`;
}
