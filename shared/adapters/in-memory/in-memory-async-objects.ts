/**
 * The object records in memory: the same contract as the decisions table's
 * (`test/helpers/async-objects.contract.ts` runs on both), for tests of the use cases.
 */
import type {
  AsyncAttempt,
  AsyncObject,
  AsyncObjectState,
  AsyncObjectStore,
} from "../../domain/async/async-objects.ts";

/** Object records in a map. */
export class InMemoryAsyncObjectStore implements AsyncObjectStore {
  private readonly objects = new Map<string, AsyncObject>();

  async create(object: AsyncObject): Promise<boolean> {
    if (this.objects.has(object.objectId)) return false;
    this.objects.set(object.objectId, { ...object });
    return true;
  }

  async get(objectId: string): Promise<AsyncObject | undefined> {
    const found = this.objects.get(objectId);
    return found ? { ...found } : undefined;
  }

  async retry(objectId: string, from: string, next: AsyncAttempt): Promise<boolean> {
    const found = this.objects.get(objectId);
    if (found?.state !== "submitted" || found.inferenceId !== from) return false;
    this.objects.set(objectId, { ...found, ...next });
    return true;
  }

  async close(
    objectId: string,
    state: Exclude<AsyncObjectState, "submitted">,
    reason?: string,
  ): Promise<boolean> {
    const found = this.objects.get(objectId);
    if (found?.state !== "submitted") return false;
    this.objects.set(objectId, { ...found, state, ...(reason ? { reason } : {}) });
    return true;
  }

  async open(limit: number): Promise<AsyncObject[]> {
    return [...this.objects.values()]
      .filter((object) => object.state === "submitted")
      .sort((a, b) =>
        a.submittedAt === b.submittedAt
          ? a.objectId.localeCompare(b.objectId)
          : a.submittedAt < b.submittedAt
            ? -1
            : 1,
      )
      .slice(0, limit)
      .map((object) => ({ ...object }));
  }
}
