/**
 * Encoders from float32 values to the byte layouts llama.cpp reads: F32, F16, Q8_0 and Q4_0.
 *
 * Q8_0 block: fp16 scale `d = amax / 127`, then 32 int8 values `round(x / d)`.
 * Q4_0 block: fp16 scale `d = max / -8` (max is the value of largest magnitude, with its sign),
 * then 16 bytes: value j in the low nibble of byte j, value j + 16 in its high nibble, each
 * stored as `clamp(trunc(x / d + 8.5), 0, 15)`.
 */
import {
  type GgmlTensorTypeName,
  QUANT_BLOCK_BYTES,
  QUANT_BLOCK_VALUES,
  tensorByteLength,
} from "./format.ts";

const f32Scratch = new Float32Array(1);
const u32Scratch = new Uint32Array(f32Scratch.buffer);

/** IEEE half-precision bits of a number, rounded to nearest even; overflow saturates to infinity. */
export function float32ToFloat16Bits(value: number): number {
  f32Scratch[0] = value;
  const bits = u32Scratch[0]!;
  const sign = (bits >>> 16) & 0x8000;
  const exponent = (bits >>> 23) & 0xff;
  let mantissa = bits & 0x7fffff;
  if (exponent === 0xff) return sign | 0x7c00 | (mantissa ? 0x200 : 0);
  let halfExponent = exponent - 127 + 15;
  if (halfExponent >= 0x1f) return sign | 0x7c00;
  if (halfExponent <= 0) {
    if (halfExponent < -10) return sign;
    mantissa |= 0x800000;
    const shift = 14 - halfExponent;
    let half = mantissa >>> shift;
    const remainder = mantissa & ((1 << shift) - 1);
    const halfway = 1 << (shift - 1);
    if (remainder > halfway || (remainder === halfway && half & 1)) half++;
    return sign | half;
  }
  let half = (halfExponent << 10) | (mantissa >>> 13);
  const remainder = mantissa & 0x1fff;
  if (remainder > 0x1000 || (remainder === 0x1000 && half & 1)) half++;
  if ((half & 0x7c00) === 0x7c00) halfExponent = 0x1f;
  return sign | half;
}

/** The number a half-precision bit pattern stands for. */
export function float16BitsToFloat32(bits: number): number {
  const sign = bits & 0x8000 ? -1 : 1;
  const exponent = (bits >>> 10) & 0x1f;
  const mantissa = bits & 0x3ff;
  if (exponent === 0) return sign * 2 ** -14 * (mantissa / 1024);
  if (exponent === 0x1f) return mantissa ? Number.NaN : sign * Number.POSITIVE_INFINITY;
  return sign * 2 ** (exponent - 15) * (1 + mantissa / 1024);
}

/** Encodes `values` in the given tensor type; quantized types need a multiple of 32 values. */
export function encodeTensor(type: GgmlTensorTypeName, values: Float32Array): Uint8Array {
  const out = new Uint8Array(tensorByteLength(type, values.length));
  const view = new DataView(out.buffer);
  switch (type) {
    case "F32":
      for (let i = 0; i < values.length; i++) view.setFloat32(i * 4, values[i]!, true);
      return out;
    case "F16":
      for (let i = 0; i < values.length; i++) view.setUint16(i * 2, float32ToFloat16Bits(values[i]!), true);
      return out;
    case "Q8_0":
      for (let block = 0; block * QUANT_BLOCK_VALUES < values.length; block++) {
        encodeQ8Block(values, block * QUANT_BLOCK_VALUES, view, block * QUANT_BLOCK_BYTES.Q8_0);
      }
      return out;
    case "Q4_0":
      for (let block = 0; block * QUANT_BLOCK_VALUES < values.length; block++) {
        encodeQ4Block(values, block * QUANT_BLOCK_VALUES, out, block * QUANT_BLOCK_BYTES.Q4_0);
      }
      return out;
  }
}

function encodeQ8Block(values: Float32Array, from: number, view: DataView, at: number): void {
  let amax = 0;
  for (let j = 0; j < QUANT_BLOCK_VALUES; j++) amax = Math.max(amax, Math.abs(values[from + j]!));
  const scale = amax / 127;
  const inverse = scale === 0 ? 0 : 1 / scale;
  view.setUint16(at, float32ToFloat16Bits(scale), true);
  for (let j = 0; j < QUANT_BLOCK_VALUES; j++) {
    view.setInt8(at + 2 + j, Math.round(values[from + j]! * inverse));
  }
}

function encodeQ4Block(values: Float32Array, from: number, out: Uint8Array, at: number): void {
  let amax = 0;
  let max = 0;
  for (let j = 0; j < QUANT_BLOCK_VALUES; j++) {
    const v = values[from + j]!;
    if (Math.abs(v) > amax) {
      amax = Math.abs(v);
      max = v;
    }
  }
  const scale = max / -8;
  const inverse = scale === 0 ? 0 : 1 / scale;
  new DataView(out.buffer, out.byteOffset).setUint16(at, float32ToFloat16Bits(scale), true);
  const half = QUANT_BLOCK_VALUES / 2;
  for (let j = 0; j < half; j++) {
    const low = Math.min(15, Math.trunc(values[from + j]! * inverse + 8.5));
    const high = Math.min(15, Math.trunc(values[from + half + j]! * inverse + 8.5));
    out[at + 2 + j] = low | (high << 4);
  }
}

/** Decodes a tensor's bytes back to float32 values (used to check the encoders). */
export function decodeTensor(type: GgmlTensorTypeName, bytes: Uint8Array, elements: number): Float32Array {
  const values = new Float32Array(elements);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const blockBytes = QUANT_BLOCK_BYTES[type];
  for (let i = 0; i < elements; i++) {
    if (type === "F32") values[i] = view.getFloat32(i * 4, true);
    else if (type === "F16") values[i] = float16BitsToFloat32(view.getUint16(i * 2, true));
    else {
      const block = Math.floor(i / QUANT_BLOCK_VALUES);
      const j = i % QUANT_BLOCK_VALUES;
      const scale = float16BitsToFloat32(view.getUint16(block * blockBytes, true));
      if (type === "Q8_0") values[i] = scale * view.getInt8(block * blockBytes + 2 + j);
      else {
        const half = QUANT_BLOCK_VALUES / 2;
        const byte = view.getUint8(block * blockBytes + 2 + (j % half));
        values[i] = scale * ((j < half ? byte & 0x0f : byte >> 4) - 8);
      }
    }
  }
  return values;
}
