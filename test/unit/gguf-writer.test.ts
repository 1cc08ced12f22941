import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { readGgufFileInfo } from "node-llama-cpp";
import { describe, expect, it } from "vitest";
import { encodeTensor } from "../../endpoint/gguf/quantize.ts";
import { gguf, writeGgufFile } from "../../endpoint/gguf/writer.ts";

describe("writeGgufFile", () => {
  it("writes metadata and aligned tensors that node-llama-cpp's own parser reads back", async () => {
    const dir = await mkdtemp(join(tmpdir(), "gguf-"));
    const path = join(dir, "small.gguf");
    const values = Float32Array.from({ length: 64 }, (_, i) => i / 10);
    const size = await writeGgufFile(path, {
      metadata: {
        "general.architecture": gguf.str("llama"),
        "llama.block_count": gguf.u32(3),
        "llama.attention.layer_norm_rms_epsilon": gguf.f32(1e-5),
        "tokenizer.ggml.add_bos_token": gguf.bool(true),
        "tokenizer.ggml.tokens": gguf.strings(["<unk>", "a", "é"]),
        "tokenizer.ggml.token_type": gguf.i32s([2, 1, 1]),
      },
      tensors: [
        {
          name: "odd",
          dims: [3],
          type: "F32",
          chunks: () => [encodeTensor("F32", Float32Array.of(1, 2, 3))],
        },
        { name: "q8", dims: [32, 2], type: "Q8_0", chunks: () => [encodeTensor("Q8_0", values)] },
      ],
    });
    const info = await readGgufFileInfo(path, { logWarnings: false });
    expect(info.version).toBe(3);
    expect(info.metadata.general.architecture).toBe("llama");
    const llama = (info.metadata as unknown as { llama: Record<string, unknown> }).llama;
    expect(llama.block_count).toBe(3);
    expect(llama.attention).toEqual({ layer_norm_rms_epsilon: expect.closeTo(1e-5, 9) });
    expect(info.metadata.tokenizer?.ggml?.tokens).toEqual(["<unk>", "a", "é"]);
    const [odd, q8] = info.tensorInfo!;
    expect(odd!.name).toBe("odd");
    expect(q8!.dimensions.map(Number)).toEqual([32, 2]);
    expect(q8!.ggmlType).toBe(8);
    // The 12-byte tensor is padded so the next one starts on a 32-byte boundary.
    expect(Number(q8!.offset)).toBe(32);
    expect(Number(q8!.fileOffset) % 32).toBe(0);
    const bytes = await readFile(path);
    expect(bytes.length).toBe(size);
    expect(bytes.subarray(Number(q8!.fileOffset), Number(q8!.fileOffset) + 68)).toEqual(
      Buffer.from(encodeTensor("Q8_0", values)),
    );
  });

  it("refuses a tensor whose bytes do not match its shape", async () => {
    const dir = await mkdtemp(join(tmpdir(), "gguf-"));
    await expect(
      writeGgufFile(join(dir, "bad.gguf"), {
        metadata: {},
        tensors: [{ name: "short", dims: [4], type: "F32", chunks: () => [new Uint8Array(8)] }],
      }),
    ).rejects.toThrow(/short: produced 8 bytes, its shape needs 16/);
  });
});
