/**
 * The async lane's objects: a group of queued items of one policy version, written as one JSONL
 * input object (a System One request per line, what the endpoint reads) and one items object (the
 * items themselves, line for line, what the result step decides), submitted with one
 * InvokeEndpointAsync. Its record counts the invocation's attempts, keeps where SageMaker said the
 * current one's answers go, and says whether it is still open. Each request line names its item
 * (`x_item`: the item's id and its line in the object), and the container echoes that and the
 * SHA-256 of the line it scored on the answer line, so an answer is matched to its item by
 * identity, never by position. The ports for the records and for the endpoint's asynchronous
 * invocation are here; the use cases are `shared/use-cases/async/async-submit.ts` and `async-results.ts`.
 */
import { createHash } from "node:crypto";
import { systemOneRequest } from "../contracts/system-one/index.ts";
import type { Item } from "../item.ts";
import type { Policy } from "../policy/policy.ts";
import { ASYNC_LANE, type AsyncSource, MEASURED_SECONDS_PER_ITEM, SIZING_MARGIN } from "../topology.ts";

/** Where an object is in its life: open until its items are settled or dead-lettered. */
export type AsyncObjectState = "submitted" | "settled" | "dead_lettered";

/** One object's record. */
export interface AsyncObject {
  readonly objectId: string;
  /** The lane its items came from: their dead letters go to that lane's dead-letter queue. */
  readonly source: AsyncSource;
  readonly policyId: string;
  readonly policyVersion: number;
  /** The async endpoint that scores it. */
  readonly endpointName: string;
  /**
   * The model asked for, in each request's `model` field; absent: the endpoint's own. Kept on the
   * record so that a later tier (a larger model on another endpoint) names what scored the items.
   */
  readonly model?: string;
  readonly itemCount: number;
  /** Invocations so far (1 after the first). */
  readonly attempts: number;
  /** The current invocation's id; a notification of an earlier one is stale. */
  readonly inferenceId: string;
  /**
   * Where SageMaker said the current invocation's answers go (`s3://.../async/output/...`): the
   * only file the result step reads for it, whatever a notification names.
   */
  readonly outputLocation: string;
  readonly state: AsyncObjectState;
  readonly submittedAt: string;
  /** Why its items were dead-lettered. */
  readonly reason?: string;
}

/** What an object's keys name: the lane, the policy version, the object. */
export interface ObjectKeyParts {
  readonly source: AsyncSource;
  readonly policyId: string;
  readonly policyVersion: number;
  readonly objectId: string;
}

/**
 * The keys of an object's files in the pipeline bucket: `async/input/<lane>/<policy>/v<version>/<id>.jsonl`
 * for the requests (the only prefix the endpoint may read) and the same under `async/items/` for the
 * items. The key names everything the result step needs, so a notification alone finds the object.
 */
export function asyncKeys(parts: ObjectKeyParts): { input: string; items: string } {
  const path = `${parts.source}/${parts.policyId}/v${parts.policyVersion}/${parts.objectId}.jsonl`;
  return { input: `${ASYNC_LANE.prefixes.input}${path}`, items: `${ASYNC_LANE.prefixes.items}${path}` };
}

const INPUT_KEY =
  /^async\/input\/(batch|intake)\/([A-Za-z0-9_-]{1,64})\/v(\d{1,9})\/(o-[0-9a-f]{24})\.jsonl$/;

/** The object an input key names, or undefined for any other key. */
export function objectOfInputKey(key: string): ObjectKeyParts | undefined {
  const match = INPUT_KEY.exec(key);
  if (!match) return undefined;
  return {
    source: match[1] as AsyncSource,
    policyId: match[2]!,
    policyVersion: Number(match[3]),
    objectId: match[4]!,
  };
}

/** A deterministic object id for a group of messages (a redelivery of the same group finds it again). */
export function objectIdOf(source: AsyncSource, policy: string, messageIds: readonly string[]): string {
  const hash = createHash("sha256").update(`${source}|${policy}|${[...messageIds].sort().join(",")}`);
  return `o-${hash.digest("hex").slice(0, 24)}`;
}

/** The id of an object's invocation `attempt`: stable, so a repeated call names the same try. */
export function inferenceIdOf(objectId: string, attempt: number): string {
  return `${objectId}-a${attempt}`;
}

/**
 * Items per object: as many as one instance scores in `objectShareOfTimeout` of the invocation
 * timeout at `secondsPerItem` (fresh items, with the sizing margin), at least 1 and at most
 * `maxItemsPerObject`. At the measured 1.475 s per fresh item: 406 items, about 10 minutes.
 */
export function asyncItemsPerObject(secondsPerItem: number = MEASURED_SECONDS_PER_ITEM.fresh): number {
  if (!(secondsPerItem > 0)) throw new RangeError(`seconds per item must be positive, got ${secondsPerItem}`);
  const budget = ASYNC_LANE.invocationTimeoutSeconds * ASYNC_LANE.objectShareOfTimeout;
  const items = Math.floor(budget / (secondsPerItem * SIZING_MARGIN));
  return Math.max(1, Math.min(ASYNC_LANE.maxItemsPerObject, items));
}

/** An `s3://bucket/key` location. */
export function s3Location(bucket: string, key: string): string {
  return `s3://${bucket}/${key}`;
}

/** The key of an `s3://` location in `bucket`; an error naming the location otherwise. */
export function keyOfLocation(location: string, bucket: string): string {
  const prefix = `s3://${bucket}/`;
  if (!location.startsWith(prefix) || location.length === prefix.length)
    throw new RangeError(`${location.slice(0, 200)} is not an object of the bucket ${bucket}`);
  return decodeURIComponent(location.slice(prefix.length));
}

/** One invocation of an object as its record keeps it. */
export interface AsyncAttempt {
  readonly attempts: number;
  readonly inferenceId: string;
  readonly outputLocation: string;
}

/** The attempt an inference id of `objectId` names (`<objectId>-a<n>`), or undefined for any other id. */
export function attemptOf(objectId: string, inferenceId: string): number | undefined {
  const match = /^(o-[0-9a-f]{24})-a(\d{1,4})$/.exec(inferenceId);
  return match && match[1] === objectId ? Number(match[2]) : undefined;
}

/** What a request line says of its item; the container echoes it on the item's answer line. */
export interface ItemIdentity {
  /** The item's id. */
  readonly id: string;
  /** Its line in the object's items file (0 first): two items with one id stay apart. */
  readonly n: number;
}

/**
 * The request line of item `n` of an object: its identity (`x_item`), then the System One request
 * (the model named when `model` is set). The submit step writes it; the result step builds it
 * again from the item to know the hash its answer must carry.
 */
export function asyncRequestLine(item: Item, policy: Policy, n: number, model?: string): string {
  const identity: ItemIdentity = { id: item.id, n };
  return JSON.stringify({ x_item: identity, ...systemOneRequest(item, policy), ...(model ? { model } : {}) });
}

/** The SHA-256 (hex) of a line's UTF-8 text, as the container computes it of the line it scored. */
export function lineSha256(line: string): string {
  return createHash("sha256").update(line, "utf8").digest("hex");
}

/** The records of the objects (the decisions table deployed and locally). */
export interface AsyncObjectStore {
  /** Records a submitted object; false when it exists (a redelivered group), which is left as it is. */
  create(object: AsyncObject): Promise<boolean>;
  get(objectId: string): Promise<AsyncObject | undefined>;
  /**
   * Counts another invocation of an open object whose current one is `from`: the new attempt and
   * inference id; false when the object moved on meanwhile (another worker, or a stale notification).
   */
  retry(objectId: string, from: string, next: AsyncAttempt): Promise<boolean>;
  /** Closes an open object (its items are settled, or dead-lettered with `reason`); false when it was not open. */
  close(objectId: string, state: Exclude<AsyncObjectState, "submitted">, reason?: string): Promise<boolean>;
  /** Open objects, oldest first, at most `limit`: the async backlog `decide status` shows. */
  open(limit: number): Promise<AsyncObject[]>;
}

/** What InvokeEndpointAsync needs for one object. */
export interface AsyncInvocation {
  readonly endpointName: string;
  /** `s3://` location of the input object. */
  readonly inputLocation: string;
  readonly inferenceId: string;
}

/** Starts asynchronous inferences (SageMaker's InvokeEndpointAsync, or the local stand-in). */
export interface InvokesAsync {
  /** Queues the object; resolves with where the answers will be written. */
  invoke(invocation: AsyncInvocation): Promise<AsyncInvoked>;
}

/** What InvokeEndpointAsync answered: the invocation's id and where its answers will be written. */
export interface AsyncInvoked {
  readonly inferenceId: string;
  readonly outputLocation: string;
}
