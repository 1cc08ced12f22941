/**
 * Checks a GGUF file before llama.cpp sees it, and hashes it.
 *
 * Some malformed files do not fail cleanly inside llama.cpp: a missing head count or
 * feed-forward length trips a native assertion that kills the whole process (docs/architecture.md). Reading the header first turns those into a clear error naming the file.
 */
import { createHash } from "node:crypto";
import { createReadStream } from "node:fs";
import { open, stat } from "node:fs/promises";
import { type GgufFileInfo, readGgufFileInfo } from "node-llama-cpp";
import { ModelFileError } from "./errors.ts";

/** Bytes and values per block of the common ggml tensor types, by type id. */
const GGML_BLOCKS: Record<number, { bytes: number; values: number }> = {
  0: { bytes: 4, values: 1 }, // F32
  1: { bytes: 2, values: 1 }, // F16
  2: { bytes: 18, values: 32 }, // Q4_0
  3: { bytes: 20, values: 32 }, // Q4_1
  6: { bytes: 22, values: 32 }, // Q5_0
  7: { bytes: 24, values: 32 }, // Q5_1
  8: { bytes: 34, values: 32 }, // Q8_0
  10: { bytes: 84, values: 256 }, // Q2_K
  11: { bytes: 110, values: 256 }, // Q3_K
  12: { bytes: 144, values: 256 }, // Q4_K
  13: { bytes: 176, values: 256 }, // Q5_K
  14: { bytes: 210, values: 256 }, // Q6_K
  30: { bytes: 2, values: 1 }, // BF16
};

/** Architectures without attention heads or feed-forward blocks. */
const HEADLESS_ARCHITECTURES = new Set(["mamba", "mamba2", "rwkv6", "rwkv7", "rwkv6qwen2"]);

/** What the header says, once checked. */
export interface CheckedModelFile {
  readonly path: string;
  readonly sizeBytes: number;
  readonly architecture: string;
  readonly info: GgufFileInfo;
}

/** Reads and checks the header of a GGUF file; throws {@link ModelFileError} on any problem. */
export async function checkModelFile(path: string): Promise<CheckedModelFile> {
  let sizeBytes: number;
  try {
    const stats = await stat(path);
    if (!stats.isFile()) throw new ModelFileError(path, "is not a regular file");
    sizeBytes = stats.size;
  } catch (error) {
    if (error instanceof ModelFileError) throw error;
    throw new ModelFileError(path, "cannot be read (does it exist?)", { cause: error });
  }
  await checkPreamble(path, sizeBytes);
  let info: GgufFileInfo;
  try {
    info = await readGgufFileInfo(path, {
      sourceType: "filesystem",
      logWarnings: false,
      spliceSplitFiles: false,
    });
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new ModelFileError(path, `is not a readable GGUF file (${reason})`, { cause: error });
  }
  const architecture = String(info.metadata.general?.architecture ?? "");
  if (!architecture) throw new ModelFileError(path, "has no general.architecture in its metadata");
  checkRequiredKeys(path, architecture, info);
  checkTensorData(path, sizeBytes, info);
  return { path, sizeBytes, architecture, info };
}

/**
 * Checks magic, version and counts before the full header parser runs: a garbage file would
 * otherwise announce billions of entries and keep the parser busy for minutes.
 */
async function checkPreamble(path: string, sizeBytes: number): Promise<void> {
  if (sizeBytes < 24) throw new ModelFileError(path, `is too short to be a GGUF file (${sizeBytes} bytes)`);
  const file = await open(path, "r");
  const head = Buffer.alloc(24);
  try {
    await file.read(head, 0, 24, 0);
  } finally {
    await file.close();
  }
  const magic = head.toString("latin1", 0, 4);
  if (magic !== "GGUF")
    throw new ModelFileError(path, `is not a GGUF file (starts with ${JSON.stringify(magic)})`);
  const version = head.readUInt32LE(4);
  if (version < 2 || version > 3) throw new ModelFileError(path, `has unsupported GGUF version ${version}`);
  const tensors = head.readBigUInt64LE(8);
  const keys = head.readBigUInt64LE(16);
  // Each tensor entry and each key takes at least 8 bytes in the header.
  if (tensors > BigInt(sizeBytes) / 8n || keys > BigInt(sizeBytes) / 8n) {
    throw new ModelFileError(
      path,
      `is corrupt: it declares ${tensors} tensors and ${keys} metadata keys in ${sizeBytes} bytes`,
    );
  }
}

function checkRequiredKeys(path: string, architecture: string, info: GgufFileInfo): void {
  const arch =
    (info.metadata as unknown as Record<string, Record<string, unknown> | undefined>)[architecture] ?? {};
  const required = ["context_length", "embedding_length", "block_count"];
  if (!HEADLESS_ARCHITECTURES.has(architecture)) required.push("feed_forward_length", "attention.head_count");
  const missing = required
    .filter((key) => lookup(arch, key) === undefined)
    .map((key) => `${architecture}.${key}`);
  if (missing.length > 0) throw new ModelFileError(path, `lacks required metadata: ${missing.join(", ")}`);
}

function lookup(record: Record<string, unknown>, dotted: string): unknown {
  let value: unknown = record;
  for (const part of dotted.split(".")) {
    if (value === null || typeof value !== "object") return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/** A truncated download leaves tensors pointing past the end of the file. */
function checkTensorData(path: string, sizeBytes: number, info: GgufFileInfo): void {
  if (info.infoEndOffset !== undefined && info.infoEndOffset > sizeBytes) {
    throw new ModelFileError(
      path,
      `is truncated inside its header (${sizeBytes} bytes, header needs ${info.infoEndOffset})`,
    );
  }
  for (const tensor of info.tensorInfo ?? []) {
    const start = Number(tensor.fileOffset);
    const block = GGML_BLOCKS[tensor.ggmlType];
    const elements = tensor.dimensions.reduce<number>((a, b) => a * Number(b), 1);
    const end = block ? start + Math.ceil(elements / block.values) * block.bytes : start + 1;
    if (end > sizeBytes) {
      throw new ModelFileError(
        path,
        `is truncated: tensor ${tensor.name} needs bytes up to ${end} but the file has ${sizeBytes}`,
      );
    }
  }
}

/** SHA-256 of a file, streamed (a 500 MB model takes about a second). */
export async function sha256File(path: string): Promise<string> {
  const hash = createHash("sha256");
  for await (const chunk of createReadStream(path, { highWaterMark: 1 << 22 })) hash.update(chunk as Buffer);
  return hash.digest("hex");
}
