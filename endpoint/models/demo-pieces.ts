/**
 * Which pieces of the demo model's vocabulary carry a known word's evidence, and the pieces that
 * keep an unknown word unknown. A known word counts only where a word starts: after a space (the
 * SentencePiece marker) or glued to an opening quote, as JSON strings begin. The same letters
 * without that start are neutral, because they are also what the middle of an unknown word
 * tokenizes to ("bring" is "▁br" + "in" + "g"). A short known word followed by more letters is
 * swallowed into a neutral piece ("Diese" is "▁Dies" + "e", not "▁Die" + "se"), and a longer
 * one counts through a prefix only for an English inflection ("crashing" as "crash" + "ing").
 */
import { SPACE_MARKER } from "./vocabulary.ts";

/** The opening quote a word may be glued to and still count (JSON strings, quoted words). */
const QUOTE = '"';
/** Suffixes that inflect English words: an unknown word counts as a known stem only through one. */
const INFLECTIONS = ["s", "es", "ed", "d", "ing", "er", "ers", "ly"] as const;
/** Shortest stem (in letters) that carries the evidence of its inflected known words. */
const MIN_STEM = 4;
/**
 * Known words this short (in letters) are swallowed by any letter that follows: they are the
 * prefixes of many foreign words ("die" of "Diese", "is" of "ist", "I" of "ich").
 */
const SHORT_WORD = 3;
const LOWER = "abcdefghijklmnopqrstuvwxyz";
const UPPER = LOWER.toUpperCase();

/** A word in lower, Capitalized and UPPER case. */
function formsOf(word: string): string[] {
  return [...new Set([word, word[0]!.toUpperCase() + word.slice(1), word.toUpperCase()])];
}

/** The pieces that carry a known word's (or stem's) evidence: each form after a space or a quote. */
export function wordStartPieces(word: string): string[] {
  return formsOf(word).flatMap((form) => [`${SPACE_MARKER}${form}`, `${QUOTE}${form}`]);
}

/**
 * Pieces to add to the vocabulary for the known `words`, with their merge scores: each form
 * glued to a quote, and for short words each word start followed by one more letter. A chain
 * piece scores its length, so each of these scores its length less a half: it joins after the
 * letters it holds have merged as far as a longer known word goes ("criterion" is not cut to
 * '"cr' through the letter "c"), yet before two-letter pieces split off the rest of a word.
 */
export function wordBoundaryPieces(words: readonly string[]): [string, number][] {
  const pieces: [string, number][] = [];
  for (const word of words) {
    for (const form of formsOf(word)) pieces.push([`${QUOTE}${form}`, form.length + 0.5]);
    if (word.length > SHORT_WORD) continue;
    for (const start of wordStartPieces(word)) {
      const letters = /[a-z]$/.test(start) ? LOWER : LOWER + UPPER;
      for (const letter of letters) pieces.push([start + letter, start.length + 0.5]);
    }
  }
  return pieces;
}

/**
 * Mean evidence of the known words that are a stem plus an English inflection, for every stem of
 * at least {@link MIN_STEM} letters that is not itself a known word ("crash" from "crashes").
 */
export function stemEvidence(evidence: ReadonlyMap<string, Float64Array>): Map<string, Float64Array> {
  const sums = new Map<string, { sum: Float64Array; count: number }>();
  for (const [word, v] of evidence) {
    if (!/^[a-z]/.test(word)) continue;
    for (const suffix of INFLECTIONS) {
      const stem = word.slice(0, -suffix.length);
      if (!word.endsWith(suffix) || stem.length < MIN_STEM || evidence.has(stem)) continue;
      const entry = sums.get(stem) ?? { sum: new Float64Array(v.length), count: 0 };
      for (let k = 0; k < v.length; k++) entry.sum[k] = (entry.sum[k] ?? 0) + (v[k] ?? 0);
      entry.count++;
      sums.set(stem, entry);
    }
  }
  return new Map([...sums].map(([stem, { sum, count }]) => [stem, sum.map((x) => x / count)]));
}
