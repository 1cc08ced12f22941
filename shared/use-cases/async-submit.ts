/**
 * The async lane's submit step: the items one invocation of the submit function received (up to
 * an object's worth, gathered by its event source) become objects, one per lane and policy
 * version, of at most `itemsPerObject` items: the items file (the queued bodies, line for line),
 * then the input file (a System One request per line, what the endpoint reads), then one
 * InvokeEndpointAsync, then the object's record. Nothing waits on the model: SageMaker queues the
 * object and notifies when its answers are written.
 *
 * An item that cannot be parsed needs no model: it takes the decide path at once, which rejects it
 * with its reason and counts it in its batch. A redelivered group (the same messages, so the same
 * object id) whose object was already invoked is not invoked again. A group whose files or
 * invocation fail is reported back whole, and its messages come back to be submitted again.
 */
import {
  type AsyncObjectStore,
  asyncItemsPerObject,
  asyncKeys,
  type InvokesAsync,
  inferenceIdOf,
  objectIdOf,
  s3Location,
} from "../domain/async-objects.ts";
import { systemOneRequest } from "../domain/contracts/system-one/index.ts";
import { type Item, parseItem } from "../domain/item.ts";
import type { ObjectStore } from "../domain/object-store.ts";
import type { Policy } from "../domain/policy/policy.ts";
import type { PolicyRegistry } from "../domain/policy/registry.ts";
import type { AsyncSource } from "../domain/topology.ts";

/** One queued message the submit step received. */
export interface QueuedItem {
  readonly messageId: string;
  readonly body: string;
  /** The lane it was queued on. */
  readonly source: AsyncSource;
}

/** What the submit step needs. */
export interface SubmitDependencies {
  readonly policies: PolicyRegistry;
  /** The pipeline bucket (a folder locally). */
  readonly objects: ObjectStore;
  /** The bucket's name, for the `s3://` locations the endpoint reads. */
  readonly bucket: string;
  readonly records: AsyncObjectStore;
  readonly endpoint: InvokesAsync;
  /** The async endpoint. */
  readonly endpointName: string;
  /** The model each request names; absent: the endpoint's own. */
  readonly model?: string;
  /** Items per object. @default asyncItemsPerObject() (from the measured seconds per item) */
  readonly itemsPerObject?: number;
  /** Decides an item that needs no model (it cannot be parsed): the decide path rejects it. */
  readonly decideWithoutModel: (body: string) => Promise<unknown>;
  readonly now: () => Date;
}

/** What became of the messages: the objects submitted, and the messages to report back (to come again). */
export interface SubmitResult {
  readonly objects: { readonly objectId: string; readonly items: number; readonly invoked: boolean }[];
  readonly rejected: number;
  readonly failed: readonly { readonly messageId: string; readonly reason: string }[];
}

interface Group {
  readonly source: AsyncSource;
  readonly policy: Policy;
  readonly entries: { messageId: string; body: string; item: Item }[];
}

/** Submits `queued` as objects; see the module comment. */
export async function submitItems(
  queued: readonly QueuedItem[],
  deps: SubmitDependencies,
): Promise<SubmitResult> {
  const groups = new Map<string, Group>();
  const failed: { messageId: string; reason: string }[] = [];
  let rejected = 0;
  for (const entry of queued) {
    const parsed = parseItem(entry.body, (id) => deps.policies.current(id) !== undefined);
    if (!parsed.ok) {
      try {
        await deps.decideWithoutModel(entry.body);
        rejected++;
      } catch (error) {
        failed.push({ messageId: entry.messageId, reason: (error as Error).message });
      }
      continue;
    }
    const policy = deps.policies.current(parsed.item.policy)!;
    const key = `${entry.source}|${policy.id}@${policy.version}`;
    const group = groups.get(key) ?? { source: entry.source, policy, entries: [] };
    group.entries.push({ messageId: entry.messageId, body: entry.body, item: parsed.item });
    groups.set(key, group);
  }
  const size = deps.itemsPerObject ?? asyncItemsPerObject();
  const objects: SubmitResult["objects"][number][] = [];
  for (const group of groups.values()) {
    for (let i = 0; i < group.entries.length; i += size) {
      const part = { ...group, entries: group.entries.slice(i, i + size) };
      try {
        objects.push(await submitObject(part, deps));
      } catch (error) {
        const reason = `${(error as Error).name}: ${(error as Error).message}`;
        for (const e of part.entries) failed.push({ messageId: e.messageId, reason });
      }
    }
  }
  return { objects, rejected, failed };
}

/** Writes one object's files, invokes the endpoint and records the object (unless a redelivery finds it invoked). */
async function submitObject(group: Group, deps: SubmitDependencies) {
  const { source, policy, entries } = group;
  const objectId = objectIdOf(
    source,
    `${policy.id}@${policy.version}`,
    entries.map((e) => e.messageId),
  );
  if (await deps.records.get(objectId)) return { objectId, items: entries.length, invoked: false };
  const keys = asyncKeys({ source, policyId: policy.id, policyVersion: policy.version, objectId });
  // The items first: once the input exists, so do the items its answers are read against.
  await deps.objects.putStream(
    keys.items,
    linesOf(entries, (e) => e.body),
  );
  await deps.objects.putStream(
    keys.input,
    linesOf(entries, (e) =>
      JSON.stringify({ ...systemOneRequest(e.item, policy), ...(deps.model ? { model: deps.model } : {}) }),
    ),
  );
  const inferenceId = inferenceIdOf(objectId, 1);
  await deps.endpoint.invoke({
    endpointName: deps.endpointName,
    inputLocation: s3Location(deps.bucket, keys.input),
    inferenceId,
  });
  // After the invocation: the result step creates the record itself if its notification comes first.
  await deps.records.create({
    objectId,
    source,
    policyId: policy.id,
    policyVersion: policy.version,
    endpointName: deps.endpointName,
    ...(deps.model ? { model: deps.model } : {}),
    itemCount: entries.length,
    attempts: 1,
    inferenceId,
    state: "submitted",
    submittedAt: deps.now().toISOString(),
  });
  return { objectId, items: entries.length, invoked: true };
}

/** The entries as JSONL, a few lines per piece. */
async function* linesOf<T>(entries: readonly T[], line: (entry: T) => string): AsyncGenerator<string> {
  const piece: string[] = [];
  for (const entry of entries) {
    piece.push(`${line(entry)}\n`);
    if (piece.length === 64) yield piece.splice(0).join("");
  }
  if (piece.length > 0) yield piece.join("");
}
