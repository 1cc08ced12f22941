/**
 * The async lane's submit step: the items one invocation of the submit function received (up to
 * an object's worth, gathered by its event source) become objects, one per lane and policy
 * version, of at most `itemsPerObject` items: the items file (each queued body on one line,
 * re-serialised, whatever its original formatting: a body printed over several lines must not
 * become several items), then the input file (line n the System One request of item n, with
 * its identity `x_item` that the container echoes), then one InvokeEndpointAsync, then the
 * object's record with the inference id and the output location SageMaker returned (the result
 * step reads no other). Nothing waits on the model: SageMaker queues the object and notifies
 * when its answers are written.
 *
 * With a hold-back, an object is not handed to SageMaker while the items of the open objects and
 * its own could not be answered within the request TTL (over the sizing margin) at the endpoint's
 * maximum instance count: its messages are reported back and come again (after the queue's
 * visibility timeout) as the backlog drains, instead of expiring in SageMaker's queue.
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
  asyncRequestLine,
  type InvokesAsync,
  inferenceIdOf,
  objectIdOf,
  s3Location,
} from "../../domain/async/async-objects.ts";
import type { Clock } from "../../domain/clock.ts";
import { type Item, parseItem } from "../../domain/item.ts";
import type { ObjectStore } from "../../domain/object-store.ts";
import type { Policy } from "../../domain/policy/policy.ts";
import type { PolicyRegistry } from "../../domain/policy/registry.ts";
import {
  ASYNC_LANE,
  type AsyncSource,
  MEASURED_SECONDS_PER_ITEM,
  SIZING_MARGIN,
} from "../../domain/topology.ts";

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
  /**
   * Holds objects back while the open backlog could not be answered within SageMaker's request
   * TTL (over the sizing margin) at the endpoint's maximum instance count; absent: no hold-back.
   */
  readonly holdBack?: HoldBack;
  /** Decides an item that needs no model (it cannot be parsed): the decide path rejects it. */
  readonly decideWithoutModel: (body: string) => Promise<unknown>;
  readonly now: Clock;
}

/** The endpoint's reach: its maximum instance count and the seconds one item takes there. */
export interface HoldBack {
  readonly maxInstances: number;
  /** @default MEASURED_SECONDS_PER_ITEM.fresh */
  readonly secondsPerItem?: number;
}

/** Open objects read to measure the backlog: more than this many is over any budget here. */
const OPEN_READ_LIMIT = 1000;

/**
 * Items the endpoint answers within the budget (the request TTL over the sizing margin) at its
 * maximum instance count; `undefined` without a hold-back.
 */
export function backlogCapacity(holdBack: HoldBack | undefined): number | undefined {
  if (!holdBack) return undefined;
  const budget = ASYNC_LANE.requestTtlSeconds / SIZING_MARGIN;
  return Math.floor(
    (budget * holdBack.maxInstances) / (holdBack.secondsPerItem ?? MEASURED_SECONDS_PER_ITEM.fresh),
  );
}

/** Items in open objects (handed to SageMaker, not yet settled); infinite past the read limit. */
async function openItems(records: AsyncObjectStore): Promise<number> {
  const open = await records.open(OPEN_READ_LIMIT);
  if (open.length >= OPEN_READ_LIMIT) return Number.POSITIVE_INFINITY;
  return open.reduce((sum, object) => sum + object.itemCount, 0);
}

/** What became of the messages: the objects submitted, and the messages to report back (to come again). */
export interface SubmitResult {
  readonly objects: { readonly objectId: string; readonly items: number; readonly invoked: boolean }[];
  readonly rejected: number;
  readonly failed: readonly { readonly messageId: string; readonly reason: string }[];
  /** Why the hold-back could not measure the backlog (nothing was held back). */
  readonly holdBackUnread?: string;
}

interface Group {
  readonly source: AsyncSource;
  readonly policy: Policy;
  /** `line`: the body on one line, what the items file holds; `item` parsed from that line. */
  readonly entries: { messageId: string; line: string; item: Item }[];
}

/** Submits `queued` as objects; see the module comment. */
export async function submitItems(
  queued: readonly QueuedItem[],
  deps: SubmitDependencies,
): Promise<SubmitResult> {
  const groups = new Map<string, Group>();
  const failed: { messageId: string; reason: string }[] = [];
  let rejected = 0;
  const known = (id: string) => deps.policies.current(id) !== undefined;
  for (const entry of queued) {
    let parsed = parseItem(entry.body, known);
    // One line whatever the producer's formatting; parsed again so the item is the line's.
    const line = parsed.ok ? JSON.stringify(JSON.parse(entry.body)) : entry.body;
    if (parsed.ok) parsed = parseItem(line, known);
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
    group.entries.push({ messageId: entry.messageId, line, item: parsed.item });
    groups.set(key, group);
  }
  const size = deps.itemsPerObject ?? asyncItemsPerObject();
  const objects: SubmitResult["objects"][number][] = [];
  const capacity = backlogCapacity(deps.holdBack);
  let unread: string | undefined;
  // Unread (the records cannot be listed): nothing held back, as without a hold-back, and said.
  let backlog =
    capacity === undefined || groups.size === 0
      ? 0
      : await openItems(deps.records).catch((error: unknown) => {
          unread = `open objects not read: ${(error as Error).message}`;
          return 0;
        });
  for (const group of groups.values()) {
    for (let i = 0; i < group.entries.length; i += size) {
      const part = { ...group, entries: group.entries.slice(i, i + size) };
      // Held back (reported, so it comes again) while the endpoint could not answer it in time.
      if (capacity !== undefined && backlog > 0 && backlog + part.entries.length > capacity) {
        const reason = `held back: ${backlog} items open, the endpoint answers ${capacity} within the request TTL`;
        for (const e of part.entries) failed.push({ messageId: e.messageId, reason });
        continue;
      }
      backlog += part.entries.length;
      try {
        objects.push(await submitObject(part, deps));
      } catch (error) {
        const reason = `${(error as Error).name}: ${(error as Error).message}`;
        for (const e of part.entries) failed.push({ messageId: e.messageId, reason });
      }
    }
  }
  return { objects, rejected, failed, ...(unread ? { holdBackUnread: unread } : {}) };
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
    linesOf(entries, (e) => e.line),
  );
  await deps.objects.putStream(
    keys.input,
    linesOf(entries, (e, n) => asyncRequestLine(e.item, policy, n, deps.model)),
  );
  const invoked = await deps.endpoint.invoke({
    endpointName: deps.endpointName,
    inputLocation: s3Location(deps.bucket, keys.input),
    inferenceId: inferenceIdOf(objectId, 1),
  });
  // After the invocation: a notification that comes first finds no record and comes back later.
  await deps.records.create({
    objectId,
    source,
    policyId: policy.id,
    policyVersion: policy.version,
    endpointName: deps.endpointName,
    ...(deps.model ? { model: deps.model } : {}),
    itemCount: entries.length,
    attempts: 1,
    inferenceId: invoked.inferenceId,
    outputLocation: invoked.outputLocation,
    state: "submitted",
    submittedAt: deps.now().toISOString(),
  });
  return { objectId, items: entries.length, invoked: true };
}

/** The entries as JSONL (`line` given each entry and its index), a few lines per piece. */
async function* linesOf<T>(
  entries: readonly T[],
  line: (entry: T, n: number) => string,
): AsyncGenerator<string> {
  const piece: string[] = [];
  for (const [n, entry] of entries.entries()) {
    piece.push(`${line(entry, n)}\n`);
    if (piece.length === 64) yield piece.splice(0).join("");
  }
  if (piece.length > 0) yield piece.join("");
}
