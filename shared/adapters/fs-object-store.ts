/**
 * The object store in a folder: the local mode's stand-in for the batch bucket. A key maps to a
 * path under the root; writes (streamed ones too) go through a temporary file and a rename, so a
 * reader never sees half an object.
 */
import { once } from "node:events";
import { createReadStream, createWriteStream } from "node:fs";
import { mkdir, readdir, rename, rm, stat, writeFile } from "node:fs/promises";
import { dirname, join, relative, sep } from "node:path";
import { checkObjectKey, type ObjectStore, type StoredObject } from "../domain/object-store.ts";

/** An object store rooted at a folder. */
export class FsObjectStore implements ObjectStore {
  constructor(readonly root: string) {}

  private path(key: string): string {
    return join(this.root, ...checkObjectKey(key).split("/"));
  }

  async put(key: string, body: string | Uint8Array): Promise<void> {
    const path = this.path(key);
    await mkdir(dirname(path), { recursive: true });
    const temporary = `${path}.${process.pid}.${Date.now()}.partial`;
    await writeFile(temporary, body);
    await rename(temporary, path);
  }

  async putStream(key: string, body: AsyncIterable<string | Uint8Array>): Promise<void> {
    const path = this.path(key);
    await mkdir(dirname(path), { recursive: true });
    const temporary = `${path}.${process.pid}.${Date.now()}.partial`;
    const out = createWriteStream(temporary);
    const failed = once(out, "error").then(([error]) => Promise.reject(error));
    failed.catch(() => undefined);
    try {
      for await (const piece of body) {
        // Wait for the disk when the stream's buffer is full: memory stays at one piece or so.
        if (!out.write(piece)) await Promise.race([once(out, "drain"), failed]);
      }
      out.end();
      await Promise.race([once(out, "finish"), failed]);
    } catch (error) {
      out.destroy();
      await rm(temporary, { force: true });
      throw error;
    }
    await rename(temporary, path);
  }

  async read(key: string): Promise<AsyncIterable<Uint8Array> | undefined> {
    const path = this.path(key);
    const found = await stat(path).catch(() => undefined);
    return found?.isFile() ? createReadStream(path) : undefined;
  }

  async list(prefix: string): Promise<StoredObject[]> {
    const out: StoredObject[] = [];
    const walk = async (folder: string): Promise<void> => {
      const entries = await readdir(folder, { withFileTypes: true }).catch(() => []);
      for (const entry of entries) {
        const path = join(folder, entry.name);
        if (entry.isDirectory()) await walk(path);
        else if (entry.isFile() && !entry.name.endsWith(".partial")) {
          const key = relative(this.root, path).split(sep).join("/");
          if (key.startsWith(prefix)) out.push({ key, bytes: (await stat(path)).size });
        }
      }
    };
    await walk(this.root);
    return out.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  }

  async delete(key: string): Promise<void> {
    await rm(this.path(key), { force: true });
  }
}
