/**
 * Builds SentencePiece-style ("llama" tokenizer) vocabularies for generated models.
 *
 * llama.cpp's SentencePiece tokenizer starts from single characters and merges neighbouring
 * pieces only when the merged text is itself a piece. A word is therefore one token only when
 * every prefix of it is a piece too, so each word brings its whole prefix chain.
 */
import { TokenType } from "../gguf/format.ts";
import { BASE_WORDS, PROMPT_WORDS, UNSPACED_WORDS } from "./words.ts";

/** The SentencePiece space marker (U+2581). */
export const SPACE_MARKER = "\u2581";

/** Special tokens every generated vocabulary has, in this order at ids 0 to 4. */
export const SPECIAL_TOKENS = {
  unknown: "<unk>",
  bos: "<s>",
  eos: "</s>",
  imStart: "<|im_start|>",
  imEnd: "<|im_end|>",
} as const;

/** A vocabulary ready for the `tokenizer.ggml.*` metadata. */
export interface Vocabulary {
  readonly tokens: string[];
  readonly scores: Float32Array;
  readonly types: Int32Array;
  readonly ids: { unknown: number; bos: number; eos: number; imStart: number; imEnd: number };
}

/** Options of {@link buildVocabulary}. */
export interface VocabularyOptions {
  /** Total size to reach by adding synthetic pieces; at least the natural size. @default natural size */
  readonly size?: number | undefined;
  /** Extra whole words to make single tokens. @default none */
  readonly extraWords?: readonly string[] | undefined;
  /**
   * Words to hold in every common form: lower, Capitalized and UPPER case, each with and without
   * the space marker (so "Refund", "REFUND" and a word right after a quote are one token). @default none
   */
  readonly wordForms?: readonly string[];
  /** Extra raw pieces added as they are (tests use them to build deliberately bad tokenizers). @default none */
  readonly extraPieces?: readonly string[] | undefined;
  /** Extra pieces typed user-defined (llama.cpp splits them out before merging). @default none */
  readonly userDefinedPieces?: readonly string[] | undefined;
  /** Extra pieces with their merge scores (higher merges first), after all the others. @default none */
  readonly scoredPieces?: readonly (readonly [string, number])[];
}

/** Builds the vocabulary: specials, 256 byte fallbacks, printable ASCII, then word pieces. */
export function buildVocabulary(options: VocabularyOptions = {}): Vocabulary {
  const tokens: string[] = [];
  const types: number[] = [];
  const scores: number[] = [];
  const seen = new Set<string>();
  const add = (piece: string, type: number, score: number) => {
    if (seen.has(piece)) return;
    seen.add(piece);
    tokens.push(piece);
    types.push(type);
    scores.push(score);
  };

  add(SPECIAL_TOKENS.unknown, TokenType.unknown, 0);
  add(SPECIAL_TOKENS.bos, TokenType.control, 0);
  add(SPECIAL_TOKENS.eos, TokenType.control, 0);
  add(SPECIAL_TOKENS.imStart, TokenType.control, 0);
  add(SPECIAL_TOKENS.imEnd, TokenType.control, 0);
  for (let byte = 0; byte < 256; byte++) {
    add(`<0x${byte.toString(16).toUpperCase().padStart(2, "0")}>`, TokenType.byte, 0);
  }
  // Single characters: the option letters A..P among them, each one token.
  add(SPACE_MARKER, TokenType.normal, -1);
  for (let code = 0x21; code <= 0x7e; code++) add(String.fromCharCode(code), TokenType.normal, -1);

  // Longer pieces score higher so that merges prefer them; the score only orders merges.
  const addChain = (piece: string) => {
    for (let end = 2; end <= piece.length; end++) add(piece.slice(0, end), TokenType.normal, end);
  };
  const addWord = (word: string) => addChain(SPACE_MARKER + word);
  // Real vocabularies hold words both after a space and glued to punctuation ("[true,false]").
  for (const word of BASE_WORDS) addWord(word);
  for (const word of BASE_WORDS) addChain(word);
  for (const word of PROMPT_WORDS) addWord(word);
  for (const word of UNSPACED_WORDS) addChain(word);
  for (const word of options.extraWords ?? []) addWord(word.toLowerCase());
  for (const word of options.wordForms ?? []) {
    for (const form of [word, word[0]!.toUpperCase() + word.slice(1), word.toUpperCase()]) {
      addWord(form);
      addChain(form);
    }
  }
  for (const piece of options.extraPieces ?? []) add(piece, TokenType.normal, piece.length + 100);
  for (const piece of options.userDefinedPieces ?? []) add(piece, TokenType.userDefined, 0);
  for (const [piece, score] of options.scoredPieces ?? []) add(piece, TokenType.normal, score);

  if (options.size !== undefined) {
    if (options.size < tokens.length) {
      throw new RangeError(`vocabulary size ${options.size} is below the ${tokens.length} pieces it needs`);
    }
    fillSynthetic(options.size, add, () => tokens.length);
  }

  return {
    tokens,
    scores: Float32Array.from(scores),
    types: Int32Array.from(types),
    ids: { unknown: 0, bos: 1, eos: 2, imStart: 3, imEnd: 4 },
  };
}

/** Adds lowercase letter strings (with and without the space marker) until the size is reached. */
function fillSynthetic(
  size: number,
  add: (piece: string, type: number, score: number) => void,
  count: () => number,
) {
  const letters = "abcdefghijklmnopqrstuvwxyz";
  for (let length = 2; count() < size; length++) {
    const total = letters.length ** length;
    for (let n = 0; n < total && count() < size; n++) {
      let text = "";
      for (let rest = n, i = 0; i < length; i++, rest = Math.floor(rest / letters.length)) {
        text = letters[rest % letters.length] + text;
      }
      add(SPACE_MARKER + text, TokenType.normal, length + 1);
      if (count() < size) add(text, TokenType.normal, length);
    }
  }
}
