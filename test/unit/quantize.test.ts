import { describe, expect, it } from "vitest";
import { tensorByteLength } from "../../endpoint/gguf/format.ts";
import {
  decodeTensor,
  encodeTensor,
  float16BitsToFloat32,
  float32ToFloat16Bits,
} from "../../endpoint/gguf/quantize.ts";
import { SeededRandom } from "../../shared/domain/random.ts";

describe("float16 conversion", () => {
  it("encodes reference values bit-exactly", () => {
    expect(float32ToFloat16Bits(1)).toBe(0x3c00);
    expect(float32ToFloat16Bits(-2)).toBe(0xc000);
    expect(float32ToFloat16Bits(65504)).toBe(0x7bff);
    expect(float32ToFloat16Bits(1e6)).toBe(0x7c00);
    expect(float32ToFloat16Bits(2 ** -24)).toBe(0x0001);
    expect(float32ToFloat16Bits(0)).toBe(0);
  });

  it("round-trips within half precision", () => {
    for (const value of [0.1, -2.5172, 1234.5, 6.1e-5, 0.0003]) {
      const back = float16BitsToFloat32(float32ToFloat16Bits(value));
      expect(Math.abs(back - value) / Math.abs(value)).toBeLessThan(1e-3);
    }
  });
});

describe("block quantization", () => {
  const values = new SeededRandom(7).uniformFloats(256, 0.5);

  // Half a step from rounding, plus the fp16 rounding of the scale (2^-11 relative) times 127.
  it("Q8_0 stores 34 bytes per 32 values and reconstructs within half a step plus scale rounding", () => {
    const bytes = encodeTensor("Q8_0", values);
    expect(bytes.length).toBe((256 / 32) * 34);
    const back = decodeTensor("Q8_0", bytes, values.length);
    for (let block = 0; block < 8; block++) {
      const slice = values.subarray(block * 32, block * 32 + 32);
      const step = Math.max(...slice.map(Math.abs)) / 127;
      for (let j = 0; j < 32; j++) {
        expect(Math.abs(back[block * 32 + j]! - slice[j]!)).toBeLessThanOrEqual(
          step * (0.5 + 127 * 2 ** -11),
        );
      }
    }
  });

  it("Q4_0 stores 18 bytes per 32 values and reconstructs within one step", () => {
    const bytes = encodeTensor("Q4_0", values);
    expect(bytes.length).toBe((256 / 32) * 18);
    const back = decodeTensor("Q4_0", bytes, values.length);
    for (let block = 0; block < 8; block++) {
      const slice = values.subarray(block * 32, block * 32 + 32);
      const step = Math.max(...slice.map(Math.abs)) / 8;
      for (let j = 0; j < 32; j++)
        expect(Math.abs(back[block * 32 + j]! - slice[j]!)).toBeLessThanOrEqual(step * 1.01);
    }
  });

  it("Q4_0 puts value j in the low nibble and value j + 16 in the high nibble", () => {
    const block = new Float32Array(32);
    block[0] = -8; // the largest magnitude sets the scale: d = -8 / -8 = 1
    block[16] = 7;
    const bytes = encodeTensor("Q4_0", block);
    expect(float16BitsToFloat32(bytes[0]! | (bytes[1]! << 8))).toBe(1);
    expect(bytes[2]! & 0x0f).toBe(0); // -8 / 1 + 8.5 -> 0
    expect(bytes[2]! >> 4).toBe(15); // 7 / 1 + 8.5 -> 15
  });

  it("rejects quantized tensors that are not whole blocks", () => {
    expect(() => tensorByteLength("Q8_0", 33)).toThrow(/multiple of 32/);
  });
});
