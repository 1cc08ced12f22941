/**
 * The object store port: where batch files arrive (`incoming/`) and where their results and
 * rejected lines are written. Two implementations pass one contract suite
 * (`test/helpers/object-store.contract.ts`): S3 (`shared/adapters/s3-object-store.ts`, deployed,
 * also tested against moto's S3 on loopback) and a folder (`shared/adapters/fs-object-store.ts`,
 * the local mode's stand-in for the bucket). Reads are streams so that a file of any size is read
 * line by line with flat memory, and so can writes be: `putStream` takes the object's pieces as
 * they are produced (S3: a multipart upload, one part in memory at a time).
 */

/** One stored object, as a listing shows it. */
export interface StoredObject {
  /** Its key: a `/`-separated relative path without `..` segments. */
  readonly key: string;
  readonly bytes: number;
}

/** Stores and reads objects by key. */
export interface ObjectStore {
  /** Writes `body` under `key`, replacing what was there. */
  put(key: string, body: string | Uint8Array): Promise<void>;
  /**
   * Writes the pieces `body` yields under `key`, replacing what was there once the last piece is
   * written (a reader never sees part of it); if `body` throws, nothing is written.
   */
  putStream(key: string, body: AsyncIterable<string | Uint8Array>): Promise<void>;
  /** The object's bytes as a stream; undefined when there is none. */
  read(key: string): Promise<AsyncIterable<Uint8Array> | undefined>;
  /** The objects whose keys start with `prefix`, in key order. */
  list(prefix: string): Promise<StoredObject[]>;
  /** Removes the object; no error when it is absent. */
  delete(key: string): Promise<void>;
}

/** Why a key cannot be used. */
export class ObjectKeyError extends Error {
  override name = "ObjectKeyError";
}

/** Checks a key: relative, `/`-separated, no empty, `.` or `..` segment, at most 1,024 bytes. */
export function checkObjectKey(key: string): string {
  const segments = key.split("/");
  if (
    key.length === 0 ||
    Buffer.byteLength(key) > 1024 ||
    segments.some((s) => s === "" || s === "." || s === "..") ||
    [...key].some((ch) => ch.charCodeAt(0) < 32 || ch === "\\")
  )
    throw new ObjectKeyError(`object key "${key.slice(0, 80)}" must be a relative path of named segments`);
  return key;
}
