/**
 * An object's answers, and one item's answer as the decide path's endpoint: the result step hands
 * `decideMessage` an endpoint that "decides" the item with the answer the async endpoint already
 * wrote, so that an item answered asynchronously is recorded, routed, published and counted by
 * exactly the code a real-time answer goes through.
 *
 * An answer is found by identity, never by position: each answer line carries the item's identity
 * the container echoed (`x_item`) and the SHA-256 of the request line it scored
 * (`x_request_sha256`); the item's answer is the one line whose hash is that of the item's own
 * request line, built again here from the item. No such line, two of them, or a line naming the
 * item for another request: the item fails, and only it. The line is then read through the System
 * One contract like any answer: one that breaks it fails its item alone too.
 *
 * A line is `{"status": 200, "body": <System One response>, "x_item": ..., "x_request_sha256": ...}`,
 * or an error status with the error body a single call would have had (the container's JSONL
 * answers, `endpoint/server/async-invocation.ts`).
 *
 * The answers stand for a cascade's first model only: a later tier is asked of `later` (the
 * real-time endpoint and tier endpoints the live lane asks), as the live lane asks it.
 */
import {
  type AsyncObject,
  asyncRequestLine,
  type ItemIdentity,
  lineSha256,
} from "../../domain/async/async-objects.ts";
import { answerIdsOf, malformed, readDecisionAnswer } from "../../domain/contracts/system-one/index.ts";
import type { DecidesItems, EndpointDecision } from "../../domain/decision-endpoint.ts";
import { EndpointRejectedError, EndpointUnavailableError } from "../../domain/errors.ts";
import { readLines } from "../../domain/input/lines.ts";
import type { Policy } from "../../domain/policy/policy.ts";

/**
 * The item was scored under another policy version than the one deciding it now (a new version
 * came out between submit and answer): it is submitted again, counting as no failure.
 */
export class ScoredUnderOtherVersionError extends Error {
  override name = "ScoredUnderOtherVersionError";
}

/** The key an identity is known by. */
const identityKey = (identity: unknown): string => JSON.stringify(identity ?? null);

/**
 * The answer lines of one object by the hash each names. Memory grows with the object's answers
 * (at most `ASYNC_LANE.maxItemsPerObject`, a few hundred at the measured speed: a few KiB each),
 * not with anything larger.
 */
export class ObjectAnswers {
  private readonly byHash = new Map<string, { line: string; identity: string; count: number }>();
  private readonly identities = new Set<string>();
  /** Non-blank lines read. */
  lines = 0;

  /** Reads an answers file. */
  static async read(stream: AsyncIterable<Uint8Array>, maxLineBytes: number): Promise<ObjectAnswers> {
    const answers = new ObjectAnswers();
    for await (const read of readLines(stream, { maxLineBytes })) {
      if (read.text === undefined || read.text.trim() === "") continue;
      answers.add(read.text);
    }
    return answers;
  }

  /** Adds one answer line; one without an identity and a hash answers no item. */
  add(line: string): void {
    this.lines++;
    let value: { x_item?: unknown; x_request_sha256?: unknown };
    try {
      value = (JSON.parse(line) ?? {}) as typeof value;
    } catch {
      return;
    }
    const hash = value.x_request_sha256;
    if (typeof hash !== "string" || value.x_item === undefined) return;
    const identity = identityKey(value.x_item);
    this.identities.add(identity);
    const found = this.byHash.get(hash);
    this.byHash.set(hash, { line, identity, count: (found?.count ?? 0) + 1 });
  }

  /** The answer line of the item `identity` whose request line hashes to `hash`; why not, as a malformed answer. */
  answerFor(identity: ItemIdentity, hash: string): string {
    const key = identityKey(identity);
    const found = this.byHash.get(hash);
    if (found && found.count > 1)
      throw malformed(
        undefined,
        `the answers hold ${found.count} lines for this item's request (duplicated)`,
      );
    if (found && found.identity === key) return found.line;
    if (found) throw malformed(undefined, "the answer to this item's request names another item");
    if (this.identities.has(key))
      throw malformed(
        undefined,
        "the answer naming this item is for another request (its x_request_sha256 is not this item's)",
      );
    throw malformed(undefined, "no answer line for this item");
  }
}

/** One answer line: its status and body, or why it cannot be read. */
function readLine(line: string): { status: number; body: unknown } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    throw malformed(undefined, `the answer line is not JSON (${(error as Error).message})`, error);
  }
  const { status, body } = (value ?? {}) as { status?: unknown; body?: unknown };
  if (typeof status !== "number" || !Number.isInteger(status) || body === undefined)
    throw malformed(undefined, "an answer line must be {status, body}");
  return { status, body };
}

/** The error message an error body carries. */
function messageOf(body: unknown): string {
  const message = (body as { error?: { message?: unknown } })?.error?.message;
  return String(message ?? JSON.stringify(body)).slice(0, 300);
}

/** The item of an object whose answer the endpoint gives. */
export interface AnsweredItem {
  readonly answers: ObjectAnswers;
  /** The item's line in the object. */
  readonly n: number;
  /** The object: the policy version it was scored under and the model its requests named. */
  readonly object: Pick<AsyncObject, "policyId" | "policyVersion" | "model">;
  /** Whether the object's policy version has a cascade (its first tier is then the one with `cascade`). */
  readonly cascades: boolean;
  /** Asks a cascade's later tiers; absent: none is asked (the item goes to people as the first left it). */
  readonly later?: DecidesItems | undefined;
}

/**
 * The endpoint that answers an item's first tier with its own answer line, and its later tiers
 * through `later`; asked about another policy version (the live one moved on, or a shadow
 * candidate), it refuses with {@link ScoredUnderOtherVersionError}.
 */
export function answeredEndpoint(answered: AnsweredItem): DecidesItems {
  const { object, later } = answered;
  return {
    serves: (model) => (later ? (later.serves?.(model) ?? true) : false),
    async decide(item, policy: Policy): Promise<EndpointDecision> {
      if (policy.id !== object.policyId || policy.version !== object.policyVersion)
        throw new ScoredUnderOtherVersionError(
          `scored under ${object.policyId}@${object.policyVersion}, asked for ${policy.id}@${policy.version} (the async lane scores the live version only)`,
        );
      // A later tier's view of the policy has no cascade of its own (`tierPolicy`).
      if (answered.cascades && policy.cascade === undefined) {
        if (!later)
          throw new EndpointUnavailableError(`no endpoint serves ${policy.model ?? "a later tier"}`);
        return later.decide(item, policy);
      }
      const request = asyncRequestLine(item, policy, answered.n, object.model);
      const line = answered.answers.answerFor({ id: item.id, n: answered.n }, lineSha256(request));
      const { status, body } = readLine(line);
      if (status === 200) {
        const answer = readDecisionAnswer(body, policy.type, answerIdsOf(policy));
        const total = (body as { x_detail?: { total_ms?: unknown } }).x_detail?.total_ms;
        return { ...answer, latencyMs: typeof total === "number" ? total : 0 };
      }
      if (status >= 400 && status < 500 && status !== 408)
        throw new EndpointRejectedError(`the model refused the item (${status}): ${messageOf(body)}`, status);
      throw new EndpointUnavailableError(`the item's answer was ${status}: ${messageOf(body)}`);
    },
  };
}
