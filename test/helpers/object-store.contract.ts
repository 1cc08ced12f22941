/**
 * One contract suite for every ObjectStore (a folder, S3 on moto): write and read back (text and
 * bytes, a large object streamed in pieces), replace, list by prefix in key order, delete, a
 * missing object, and keys that would escape the store.
 */
import { describe, expect, it } from "vitest";
import { ObjectKeyError, type ObjectStore } from "../../shared/domain/object-store.ts";

let counter = 0;

async function text(stream: AsyncIterable<Uint8Array> | undefined): Promise<string | undefined> {
  if (!stream) return undefined;
  const chunks: Buffer[] = [];
  for await (const chunk of stream) chunks.push(Buffer.from(chunk));
  return Buffer.concat(chunks).toString("utf8");
}

/** Runs the contract against the store `make()` returns. */
export function objectStoreContract(name: string, make: () => ObjectStore): void {
  describe(`ObjectStore contract: ${name}`, () => {
    const prefix = () => `contract-${process.pid}-${++counter}/`;

    it("writes, reads back, replaces and deletes an object", async () => {
      const store = make();
      const key = `${prefix()}incoming/posts.jsonl`;
      await store.put(key, '{"id":"1"}\n');
      expect(await text(await store.read(key))).toBe('{"id":"1"}\n');
      await store.put(key, new TextEncoder().encode("é\n"));
      expect(await text(await store.read(key))).toBe("é\n");
      await store.delete(key);
      expect(await store.read(key)).toBeUndefined();
      await store.delete(key); // absent: no error
    });

    it("streams a large object in pieces and lists by prefix in key order", async () => {
      const store = make();
      const base = prefix();
      const line = `${"x".repeat(99)}\n`;
      await store.put(`${base}big.jsonl`, line.repeat(30_000)); // 3 MB
      let pieces = 0;
      let bytes = 0;
      for await (const chunk of (await store.read(`${base}big.jsonl`))!) {
        pieces++;
        bytes += chunk.length;
      }
      expect(bytes).toBe(3_000_000);
      expect(pieces).toBeGreaterThan(1);
      await store.put(`${base}b/2.txt`, "2");
      await store.put(`${base}a/1.txt`, "1");
      await store.put(`${base}a/0.txt`, "0");
      expect(await store.list(`${base}a/`)).toEqual([
        { key: `${base}a/0.txt`, bytes: 1 },
        { key: `${base}a/1.txt`, bytes: 1 },
      ]);
      expect((await store.list(base)).map((o) => o.key)).toEqual([
        `${base}a/0.txt`,
        `${base}a/1.txt`,
        `${base}b/2.txt`,
        `${base}big.jsonl`,
      ]);
      expect(await store.list(`${base}none/`)).toEqual([]);
    });

    it("writes a streamed object in parts (past S3's 5 MiB multipart minimum), and nothing when the stream fails", async () => {
      const store = make();
      const key = `${prefix()}batches/results.jsonl`;
      const line = `${JSON.stringify({ id: "x".repeat(80), route: "auto" })}\n`;
      const lines = 180_000; // about 18 MB: three parts
      async function* pieces() {
        for (let i = 0; i < lines; i += 1000) yield line.repeat(1000);
      }
      await store.putStream(key, pieces());
      let bytes = 0;
      for await (const chunk of (await store.read(key))!) bytes += chunk.length;
      expect(bytes).toBe(line.length * lines);
      await store.putStream(
        `${key}.small`,
        (async function* () {
          yield "a\n";
          yield new TextEncoder().encode("b\n");
        })(),
      );
      expect(await text(await store.read(`${key}.small`))).toBe("a\nb\n");
      // A failing stream leaves what was there before, and no half object under the key.
      async function* broken() {
        yield line.repeat(60_000); // past one part
        throw new Error("the member query failed");
      }
      await expect(store.putStream(key, broken())).rejects.toThrow("the member query failed");
      bytes = 0;
      for await (const chunk of (await store.read(key))!) bytes += chunk.length;
      expect(bytes).toBe(line.length * lines);
      await expect(store.putStream(`${key}.never`, broken())).rejects.toThrow();
      expect(await store.read(`${key}.never`)).toBeUndefined();
      expect((await store.list(key.slice(0, key.lastIndexOf("/")))).map((o) => o.key).sort()).toEqual([
        key,
        `${key}.small`,
      ]);
    }, 120_000);

    it("refuses keys that would leave the store or are not paths", async () => {
      const store = make();
      for (const key of ["../escape", "a/../../b", "/absolute", "a//b", "", "a\\b"])
        await expect(store.put(key, "x"), key).rejects.toThrow(ObjectKeyError);
    });
  });
}
