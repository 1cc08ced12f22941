/**
 * Slot-check failures. Real tokenizers that break the checks cannot be generated on demand
 * (llama.cpp's SentencePiece keeps every ASCII letter a single byte token), so these cases use a
 * small hand-written tokenizer; the passing case runs on real models in the integration suites.
 */

import { type LlamaModel, LlamaText, type Token, type Tokenizer } from "node-llama-cpp";
import { describe, expect, it } from "vitest";
import { SlotCheckError } from "../../endpoint/runtime/errors.ts";
import { checkLetterSlots, massFromTopLetter, readLetters } from "../../endpoint/scorer/letter-readout.ts";

/**
 * A character tokenizer with optional multi-character pieces, merged greedily. A piece mapped
 * from a single character to `[token, ""]`-style pairs is not needed: the key `""` marks that
 * every mapped single character also emits an extra token (a letter spelled as two tokens).
 */
function fakeModel(pieces: Record<string, number> = {}): LlamaModel {
  const splitSingles = "" in pieces;
  const tokenizer = ((text: string) => {
    const tokens: Token[] = [];
    for (let i = 0; i < text.length; ) {
      const piece = Object.keys(pieces).find((p) => p !== "" && text.startsWith(p, i));
      if (piece) {
        tokens.push(pieces[piece] as Token);
        if (splitSingles && piece.length === 1) tokens.push(0 as Token);
        i += piece.length;
      } else {
        tokens.push(text.charCodeAt(i) as Token);
        i++;
      }
    }
    return tokens;
  }) as unknown as Tokenizer;
  return { tokenizer } as unknown as LlamaModel;
}

const probe = LlamaText("answer:\n");

describe("checkLetterSlots", () => {
  it("reads each letter's token at the answer position", () => {
    const slots = checkLetterSlots(fakeModel(), probe, "fake");
    expect(slots.tokens.slice(0, 3)).toEqual([65, 66, 67]);
  });

  it("fails when a letter merges with the end of the prompt", () => {
    expect(() => checkLetterSlots(fakeModel({ "\nA": 1000 }), probe, "fake")).toThrow(SlotCheckError);
    expect(() => checkLetterSlots(fakeModel({ "\nA": 1000 }), probe, "fake")).toThrow(
      /merges with the end of the prompt/,
    );
  });

  it("fails when a letter is more than one token", () => {
    // "D" is spelled as two pieces by this tokenizer.
    expect(() => checkLetterSlots(fakeModel({ D: 68, "": 0 }), probe, "fake")).toThrow(/"D" is 2 tokens/);
  });

  it("fails when two letters are the same token", () => {
    expect(() => checkLetterSlots(fakeModel({ A: 7, B: 7 }), probe, "fake")).toThrow(
      /"A" and "B" are the same token 7/,
    );
  });
});

describe("letter readout", () => {
  it("keeps the allowed-token mass a share (at most 1) when rounded probabilities sum past 1", () => {
    const probabilities = new Map([
      [10, 0.99999999],
      [11, 1e-8],
      [12, 8e-9],
    ]) as unknown as Parameters<typeof readLetters>[0];
    const readout = readLetters(probabilities, [10, 11, 12] as never, true);
    expect(readout.allowedTokenMass).toBe(1);
    expect(readLetters(probabilities, [11, 12] as never, true).allowedTokenMass).toBeCloseTo(1.8e-8, 12);
    expect(readLetters(probabilities, [10] as never, false).allowedTokenMass).toBeNull();
  });

  it("reads the mass from a top letter as its probability over its share, never past 1, and none from nonsense", () => {
    expect(massFromTopLetter(0.8, 0.4)).toBeCloseTo(0.5, 15);
    expect(massFromTopLetter(1, 1.0000001)).toBe(1);
    expect(massFromTopLetter(0, 0.4)).toBeUndefined();
    expect(massFromTopLetter(0.8, undefined)).toBeUndefined();
    expect(massFromTopLetter(0.8, Number.NaN)).toBeUndefined();
    expect(massFromTopLetter(0.8, 0)).toBeUndefined();
  });
});
