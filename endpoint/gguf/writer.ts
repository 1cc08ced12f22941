/**
 * A streaming GGUF (version 3) writer: metadata, tensor table, then aligned tensor data.
 *
 * Tensor data is produced chunk by chunk so that a 500 MB model never sits in memory whole.
 */
import { open } from "node:fs/promises";
import {
  GGUF_DEFAULT_ALIGNMENT,
  GGUF_MAGIC,
  GGUF_VERSION,
  GgmlTensorType,
  type GgmlTensorTypeName,
  type GgufScalarTypeName,
  GgufValueType,
  tensorByteLength,
} from "./format.ts";

/** One typed metadata value. Build them with {@link gguf}. */
export type GgufValue =
  | { readonly kind: GgufScalarTypeName; readonly value: number | bigint | boolean | string }
  | { readonly kind: "array"; readonly itemKind: GgufScalarTypeName; readonly values: ArrayLike<unknown> };

/** Constructors for typed metadata values. */
export const gguf = {
  u32: (value: number): GgufValue => ({ kind: "uint32", value }),
  i32: (value: number): GgufValue => ({ kind: "int32", value }),
  f32: (value: number): GgufValue => ({ kind: "float32", value }),
  bool: (value: boolean): GgufValue => ({ kind: "bool", value }),
  str: (value: string): GgufValue => ({ kind: "string", value }),
  strings: (values: readonly string[]): GgufValue => ({ kind: "array", itemKind: "string", values }),
  f32s: (values: ArrayLike<number>): GgufValue => ({ kind: "array", itemKind: "float32", values }),
  i32s: (values: ArrayLike<number>): GgufValue => ({ kind: "array", itemKind: "int32", values }),
};

/** A tensor to write: its shape (fastest-varying dimension first), type, and a producer of its bytes. */
export interface GgufTensorSpec {
  readonly name: string;
  /** Dimensions, fastest-varying first: `attn_k.weight` is `[n_embd, n_head_kv * head_dim]`. */
  readonly dims: readonly number[];
  readonly type: GgmlTensorTypeName;
  /** Yields the tensor's bytes in order; the total must equal the size its shape and type imply. */
  readonly chunks: () => Iterable<Uint8Array>;
}

/** What to write. */
export interface GgufFileSpec {
  readonly metadata: ReadonlyMap<string, GgufValue> | Record<string, GgufValue>;
  readonly tensors: readonly GgufTensorSpec[];
}

/** Grows a byte buffer for the header; the header is small next to tensor data. */
class ByteSink {
  private buffer = new Uint8Array(1 << 16);
  private view = new DataView(this.buffer.buffer);
  length = 0;

  private reserve(bytes: number): void {
    if (this.length + bytes <= this.buffer.length) return;
    let size = this.buffer.length * 2;
    while (size < this.length + bytes) size *= 2;
    const next = new Uint8Array(size);
    next.set(this.buffer.subarray(0, this.length));
    this.buffer = next;
    this.view = new DataView(next.buffer);
  }

  scalar(kind: GgufScalarTypeName, value: unknown): void {
    switch (kind) {
      case "uint8":
      case "int8":
      case "bool":
        this.reserve(1);
        this.view.setUint8(this.length, kind === "bool" ? (value ? 1 : 0) : Number(value) & 0xff);
        this.length += 1;
        return;
      case "uint16":
      case "int16":
        this.reserve(2);
        this.view.setUint16(this.length, Number(value) & 0xffff, true);
        this.length += 2;
        return;
      case "uint32":
        this.reserve(4);
        this.view.setUint32(this.length, Number(value), true);
        this.length += 4;
        return;
      case "int32":
        this.reserve(4);
        this.view.setInt32(this.length, Number(value), true);
        this.length += 4;
        return;
      case "float32":
        this.reserve(4);
        this.view.setFloat32(this.length, Number(value), true);
        this.length += 4;
        return;
      case "uint64":
        this.reserve(8);
        this.view.setBigUint64(this.length, BigInt(value as number | bigint), true);
        this.length += 8;
        return;
      case "int64":
        this.reserve(8);
        this.view.setBigInt64(this.length, BigInt(value as number | bigint), true);
        this.length += 8;
        return;
      case "float64":
        this.reserve(8);
        this.view.setFloat64(this.length, Number(value), true);
        this.length += 8;
        return;
      case "string": {
        const bytes = Buffer.from(String(value), "utf8");
        this.scalar("uint64", bytes.length);
        this.reserve(bytes.length);
        this.buffer.set(bytes, this.length);
        this.length += bytes.length;
        return;
      }
    }
  }

  padTo(alignment: number): void {
    const pad = (alignment - (this.length % alignment)) % alignment;
    this.reserve(pad);
    this.buffer.fill(0, this.length, this.length + pad);
    this.length += pad;
  }

  bytes(): Uint8Array {
    return this.buffer.subarray(0, this.length);
  }
}

function alignUp(offset: number, alignment: number): number {
  return Math.ceil(offset / alignment) * alignment;
}

function writeValue(sink: ByteSink, value: GgufValue): void {
  if (value.kind === "array") {
    sink.scalar("uint32", GgufValueType.array);
    sink.scalar("uint32", GgufValueType[value.itemKind]);
    sink.scalar("uint64", value.values.length);
    for (let i = 0; i < value.values.length; i++) sink.scalar(value.itemKind, value.values[i]);
    return;
  }
  sink.scalar("uint32", GgufValueType[value.kind]);
  sink.scalar(value.kind, value.value);
}

/**
 * Writes a GGUF file to `path` and returns its size in bytes.
 *
 * @example
 * await writeGgufFile("m.gguf", { metadata: { "general.architecture": gguf.str("llama") }, tensors: [] });
 */
export async function writeGgufFile(path: string, spec: GgufFileSpec): Promise<number> {
  const metadata = spec.metadata instanceof Map ? [...spec.metadata] : Object.entries(spec.metadata);
  const alignmentValue = metadata.find(([key]) => key === "general.alignment")?.[1];
  const alignment =
    alignmentValue && alignmentValue.kind !== "array" ? Number(alignmentValue.value) : GGUF_DEFAULT_ALIGNMENT;

  const header = new ByteSink();
  for (const char of GGUF_MAGIC) header.scalar("uint8", char.charCodeAt(0));
  header.scalar("uint32", GGUF_VERSION);
  header.scalar("uint64", spec.tensors.length);
  header.scalar("uint64", metadata.length);
  for (const [key, value] of metadata) {
    header.scalar("string", key);
    writeValue(header, value);
  }

  let dataOffset = 0;
  const sizes: number[] = [];
  for (const tensor of spec.tensors) {
    const elements = tensor.dims.reduce((a, b) => a * b, 1);
    const size = tensorByteLength(tensor.type, elements);
    sizes.push(size);
    header.scalar("string", tensor.name);
    header.scalar("uint32", tensor.dims.length);
    for (const dim of tensor.dims) header.scalar("uint64", dim);
    header.scalar("uint32", GgmlTensorType[tensor.type]);
    header.scalar("uint64", dataOffset);
    dataOffset = alignUp(dataOffset + size, alignment);
  }
  header.padTo(alignment);

  const file = await open(path, "w");
  try {
    let position = 0;
    const write = async (bytes: Uint8Array) => {
      await file.write(bytes, 0, bytes.length, position);
      position += bytes.length;
    };
    await write(header.bytes());
    const padding = new Uint8Array(alignment);
    for (const [index, tensor] of spec.tensors.entries()) {
      let written = 0;
      for (const chunk of tensor.chunks()) {
        await write(chunk);
        written += chunk.length;
      }
      if (written !== sizes[index]) {
        throw new RangeError(
          `tensor ${tensor.name}: produced ${written} bytes, its shape needs ${sizes[index]}`,
        );
      }
      const pad = (alignment - (written % alignment)) % alignment;
      // llama.cpp reads every tensor padded to the alignment, the last one included.
      if (pad > 0) await write(padding.subarray(0, pad));
    }
    return position;
  } finally {
    await file.close();
  }
}
