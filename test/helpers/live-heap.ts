/**
 * Measuring what a step keeps alive: the live heap (after a full collection, so garbage not yet
 * collected does not count) sampled while an object store's streamed write runs, which is where
 * the batch files step spends its time. `--expose-gc` is set at run time, so no flag is needed.
 */
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import type { ObjectStore } from "../../shared/domain/object-store.ts";

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;

/** The heap still in use after a full collection, in bytes. */
export function liveHeap(): number {
  gc();
  return process.memoryUsage().heapUsed;
}

/** The store, its streamed writes sampling the live heap every `every` pieces (and at their end). */
export function sampledStore(
  inner: ObjectStore,
  every: number,
  sample: (bytes: number) => void,
): ObjectStore {
  async function* sampled(body: AsyncIterable<string | Uint8Array>) {
    let pieces = 0;
    for await (const piece of body) {
      if (++pieces % every === 0) sample(liveHeap());
      yield piece;
    }
    sample(liveHeap());
  }
  return {
    put: (key, body) => inner.put(key, body),
    putStream: (key, body) => inner.putStream(key, sampled(body)),
    read: (key) => inner.read(key),
    list: (prefix) => inner.list(prefix),
    delete: (key) => inner.delete(key),
  };
}
