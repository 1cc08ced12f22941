/**
 * One contract suite for every AsyncObjectStore (the decisions table on DynamoDB Local, and in
 * memory): a record is created once, an attempt moves only from the current one (its inference id
 * and output location together), a closed object
 * stays closed, and the open ones are listed oldest first.
 */
import { describe, expect, it } from "vitest";
import type { AsyncObject, AsyncObjectStore } from "../../shared/domain/async/async-objects.ts";

let counter = 0;

/** An open object with a unique id, submitted `minute` minutes into 2027. */
export function openObject(minute: number, overrides: Partial<AsyncObject> = {}): AsyncObject {
  counter++;
  const id = `o-${String(process.pid).padStart(8, "0")}${String(Date.now() % 1e8).padStart(8, "0")}${String(counter).padStart(8, "0")}`;
  return {
    objectId: id.slice(0, 26),
    source: "batch",
    policyId: "content-moderation",
    policyVersion: 1,
    endpointName: "async-endpoint",
    itemCount: 388,
    attempts: 1,
    inferenceId: `${id.slice(0, 26)}-a1`,
    outputLocation: `s3://bucket/async/output/results/${id.slice(0, 26)}-a1.out`,
    state: "submitted",
    submittedAt: new Date(Date.UTC(2027, 0, 1, 0, minute)).toISOString(),
    ...overrides,
  };
}

/** Runs the contract against the store `make()` returns. */
export function asyncObjectStoreContract(name: string, make: () => AsyncObjectStore): void {
  describe(`AsyncObjectStore contract: ${name}`, () => {
    it("creates a record once and reads it back as it was written", async () => {
      const store = make();
      const object = openObject(1, { model: "tier-2" });
      expect(await store.create(object)).toBe(true);
      expect(await store.create({ ...object, itemCount: 1 })).toBe(false);
      expect(await store.get(object.objectId)).toEqual(object);
      expect(await store.get("o-000000000000000000000000")).toBeUndefined();
    });

    it("counts an attempt only from the current inference, and only while open", async () => {
      const store = make();
      const object = openObject(2);
      await store.create(object);
      const next = {
        attempts: 2,
        inferenceId: `${object.objectId}-a2`,
        outputLocation: "s3://bucket/async/output/results/a2.out",
      };
      expect(await store.retry(object.objectId, "stale-a9", next)).toBe(false);
      expect(await store.retry(object.objectId, object.inferenceId, next)).toBe(true);
      expect(await store.retry(object.objectId, object.inferenceId, next)).toBe(false);
      expect(await store.get(object.objectId)).toMatchObject(next);
      expect(await store.close(object.objectId, "dead_lettered", "failed 3 times")).toBe(true);
      expect(await store.close(object.objectId, "settled")).toBe(false);
      expect(
        await store.retry(object.objectId, next.inferenceId, { ...next, attempts: 3, inferenceId: "x" }),
      ).toBe(false);
      expect(await store.get(object.objectId)).toMatchObject({
        state: "dead_lettered",
        reason: "failed 3 times",
      });
    });

    it("lists the open objects oldest first, closed ones left out, at most the limit", async () => {
      const store = make();
      // A year no other test writes in, so the table shared with other suites holds only these.
      const objects = [5, 3, 4, 6].map((minute) =>
        openObject(minute, { submittedAt: `1999-01-01T00:0${minute}:00.000Z` }),
      );
      for (const object of objects) await store.create(object);
      await store.close(objects[2]!.objectId, "settled");
      const open = (await store.open(1000)).filter((o) => o.submittedAt.startsWith("1999"));
      expect(open.map((o) => o.submittedAt)).toEqual([
        "1999-01-01T00:03:00.000Z",
        "1999-01-01T00:05:00.000Z",
        "1999-01-01T00:06:00.000Z",
      ]);
      expect((await store.open(1)).length).toBe(1);
    });
  });
}
