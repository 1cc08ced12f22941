/**
 * Constants of the GGUF file format (version 3), as llama.cpp reads it.
 *
 * Only the parts the project writes are named here: metadata value types, the tensor types we
 * produce, and the block layouts of the quantized types.
 */

/** The four bytes every GGUF file starts with. */
export const GGUF_MAGIC = "GGUF";

/** The GGUF version this writer produces. */
export const GGUF_VERSION = 3;

/** Default alignment of the tensor data section and of every tensor in it (`general.alignment`). */
export const GGUF_DEFAULT_ALIGNMENT = 32;

/** Type tags of metadata values, as stored in the file. */
export const GgufValueType = {
  uint8: 0,
  int8: 1,
  uint16: 2,
  int16: 3,
  uint32: 4,
  int32: 5,
  float32: 6,
  bool: 7,
  string: 8,
  array: 9,
  uint64: 10,
  int64: 11,
  float64: 12,
} as const;

/** Name of a metadata scalar type. */
export type GgufScalarTypeName = Exclude<keyof typeof GgufValueType, "array">;

/** Tensor element types this project writes (ggml type ids). */
export const GgmlTensorType = {
  F32: 0,
  F16: 1,
  Q4_0: 2,
  Q8_0: 8,
} as const;

/** Name of a tensor element type this project writes. */
export type GgmlTensorTypeName = keyof typeof GgmlTensorType;

/** `general.file_type` values llama.cpp reports for a file whose big tensors share one type. */
export const GgufFileType: Record<GgmlTensorTypeName, number> = {
  F32: 0,
  F16: 1,
  Q4_0: 2,
  Q8_0: 7,
};

/** Values per quantization block for the block-quantized types. */
export const QUANT_BLOCK_VALUES = 32;

/** Bytes in one block of 32 values: fp16 scale plus the packed values. */
export const QUANT_BLOCK_BYTES: Record<GgmlTensorTypeName, number> = {
  F32: 4 * QUANT_BLOCK_VALUES,
  F16: 2 * QUANT_BLOCK_VALUES,
  Q4_0: 2 + QUANT_BLOCK_VALUES / 2,
  Q8_0: 2 + QUANT_BLOCK_VALUES,
};

/** Bytes a tensor of `elements` values takes when stored as `type`. */
export function tensorByteLength(type: GgmlTensorTypeName, elements: number): number {
  if (type === "F32") return elements * 4;
  if (type === "F16") return elements * 2;
  if (elements % QUANT_BLOCK_VALUES !== 0) {
    throw new RangeError(`${type} tensors need a multiple of ${QUANT_BLOCK_VALUES} values, got ${elements}`);
  }
  return (elements / QUANT_BLOCK_VALUES) * QUANT_BLOCK_BYTES[type];
}

/** SentencePiece token types stored in `tokenizer.ggml.token_type`. */
export const TokenType = {
  normal: 1,
  unknown: 2,
  control: 3,
  userDefined: 4,
  unused: 5,
  byte: 6,
} as const;
