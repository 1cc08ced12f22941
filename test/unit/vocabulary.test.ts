import { describe, expect, it } from "vitest";
import { TokenType } from "../../endpoint/gguf/format.ts";
import { buildVocabulary, SPACE_MARKER } from "../../endpoint/models/vocabulary.ts";

describe("buildVocabulary", () => {
  const vocabulary = buildVocabulary({ extraWords: ["Reimbursement"] });

  it("has the special tokens first and every byte as a fallback", () => {
    expect(vocabulary.tokens.slice(0, 5)).toEqual(["<unk>", "<s>", "</s>", "<|im_start|>", "<|im_end|>"]);
    expect(vocabulary.types[1]).toBe(TokenType.control);
    const bytes = vocabulary.tokens.filter((_, i) => vocabulary.types[i] === TokenType.byte);
    expect(bytes).toHaveLength(256);
    expect(bytes).toContain("<0x0A>");
  });

  it("has each option letter A..P as a piece of its own", () => {
    for (const letter of "ABCDEFGHIJKLMNOP") expect(vocabulary.tokens).toContain(letter);
  });

  it("brings every prefix of a word, so the word is reachable by merges", () => {
    const word = `${SPACE_MARKER}reimbursement`;
    for (let end = 2; end <= word.length; end++) expect(vocabulary.tokens).toContain(word.slice(0, end));
  });

  it("has no duplicate pieces and fills to an exact size", () => {
    expect(new Set(vocabulary.tokens).size).toBe(vocabulary.tokens.length);
    const big = buildVocabulary({ size: 151_936 });
    expect(big.tokens).toHaveLength(151_936);
    expect(new Set(big.tokens).size).toBe(151_936);
    expect(big.scores).toHaveLength(151_936);
  });

  it("refuses a size below what it needs", () => {
    expect(() => buildVocabulary({ size: 10 })).toThrow(/below/);
  });
});
