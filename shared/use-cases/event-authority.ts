/**
 * The record is the authority for an effect. A "Decision Made" only says that something was
 * decided; a target reads what to do from the decision record and acts only when the event is the
 * one that record stands for (the same `eventId`, route, choice and policy version) and, for an
 * automatic action, only when the record's policy version lets that option be automated. Anything
 * else (a forged PutEvents, an altered dead letter put back by a replay) is refused with
 * {@link EventRecordMismatchError}, which the target functions count, log with both sides and
 * alarm on, and never apply or retry.
 *
 * Version order at the record: a genuine event of an older policy version (a late delivery, a
 * replay, the local outbox's re-announcement at start) is not applied once a newer version of the
 * same item holds a decision ({@link newerDecision}): the newer decision is the item's, and
 * applying the older one after it would undo it. That is no forgery, so it is not refused as
 * one: the target counts it as `superseded` and consumes it.
 */
import type { DecisionMade } from "../domain/contracts/events.ts";
import type { DecisionRecord } from "../domain/decision-record.ts";
import type { DecisionStore, RecordKey } from "../domain/decision-store.ts";
import { type DecisionFacts, EventRecordMismatchError } from "../domain/errors.ts";
import type { PolicyRegistry } from "../domain/policy/registry.ts";
import type { Route } from "../domain/routing.ts";
import { eventFor } from "./record-event.ts";

/** The "Decision Made" detail fields the targets read (the event's schema, `contracts/events.ts`). */
export type DecisionMadeDetail = Pick<
  DecisionMade,
  "itemId" | "policyId" | "policyVersion" | "chosen" | "route" | "eventId"
>;

/** The facts of the event `record` stands for (what the decide path published). */
export function recordFacts(record: DecisionRecord): DecisionFacts {
  const detail = eventFor(record).detail as Record<string, unknown>;
  return {
    eventId: String(detail.eventId),
    route: String(detail.route),
    chosen: String(detail.chosen),
    policyVersion: record.policyVersion,
  };
}

/**
 * The record the event names, checked against the event: throws
 * {@link EventRecordMismatchError} when they disagree, or when `route` is "auto" and the record's
 * policy version does not automate its option. A missing record throws a plain (retryable)
 * error: a "Decision Made" always follows its record, so a missing one is a read to retry, and
 * the queue's dead-letter queue keeps an event whose record never appears.
 */
export async function verifiedRecord(
  detail: DecisionMadeDetail,
  route: Route,
  deps: { store: DecisionStore; policies?: PolicyRegistry },
): Promise<DecisionRecord> {
  const record = await deps.store.get(detail);
  if (!record)
    throw new Error(
      `no decision record for ${detail.itemId} under ${detail.policyId}@${detail.policyVersion}`,
    );
  const event: DecisionFacts = {
    eventId: detail.eventId,
    route: detail.route,
    chosen: detail.chosen,
    policyVersion: detail.policyVersion,
  };
  const refuse = (why: string, facts: Partial<DecisionFacts> = {}): never => {
    throw new EventRecordMismatchError(
      `${detail.itemId} under ${detail.policyId}@${detail.policyVersion}: ${why}`,
      detail.itemId,
      detail.policyId,
      event,
      { status: record.status, ...facts },
    );
  };
  if (record.status === "rejected" || record.route === undefined)
    return refuse("the record holds no decision");
  const facts = recordFacts(record);
  const differs = (Object.keys(event) as (keyof DecisionFacts)[]).filter((k) => event[k] !== facts[k]);
  if (differs.length > 0) refuse(`the event's ${differs.join(", ")} differ from the record's`, facts);
  if (record.route !== route) refuse(`the record was routed ${record.route}, not ${route}`, facts);
  if (route === "auto") {
    const option = deps.policies
      ?.version(record.policyId, record.policyVersion)
      ?.options.find((o) => o.id === record.chosen);
    if (!option?.automate)
      refuse(
        option
          ? `option ${record.chosen} is never automated under ${record.policyId}@${record.policyVersion}`
          : `policy ${record.policyId}@${record.policyVersion} or its option ${record.chosen} is unknown here`,
        facts,
      );
  }
  return record;
}

/** Whether a record holds a decision (decided, actioned, queued or reviewed: anything but rejected). */
function holdsDecision(record: DecisionRecord): boolean {
  return record.status !== "rejected" && record.route !== undefined;
}

/**
 * The decision of a newer policy version of the same item and policy, if one exists: then
 * nothing of `key`'s version may be applied or announced any more. Reads the record of each
 * version newer than `key`'s that could have decided it (the registry's, candidates aside),
 * newest first, with GetItem alone (what every target may do): none while no newer version exists.
 */
export async function newerDecision(
  key: RecordKey,
  deps: { store: Pick<DecisionStore, "get">; policies: PolicyRegistry },
): Promise<DecisionRecord | undefined> {
  const current = deps.policies.current(key.policyId)?.version ?? 0;
  for (let version = current; version > key.policyVersion; version--) {
    const policy = deps.policies.version(key.policyId, version);
    if (!policy || policy.candidate) continue;
    const newer = await deps.store.get({
      itemId: key.itemId,
      policyId: key.policyId,
      policyVersion: version,
    });
    if (newer && holdsDecision(newer)) return newer;
  }
  return undefined;
}
