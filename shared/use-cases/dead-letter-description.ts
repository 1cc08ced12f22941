/**
 * What a dead letter is, read from its body: an item (the intake's and the batch lane's), an
 * EventBridge event (the targets' queues and the rules' dead-letter queues: the item and policy
 * are in its detail, the bus's failure in the message attributes), or a Lambda on-failure record
 * (job failures: the function, why it failed, and when).
 */
import type { QueueMessage } from "../domain/message-queue.ts";

/** One dead letter, as a replay lists it. */
export interface DeadLetter {
  readonly messageId: string;
  /** What it is: "item", an event's detail type, or the function whose run failed. */
  readonly kind: string;
  readonly itemId: string | undefined;
  readonly policy: string | undefined;
  readonly reason: string | undefined;
  readonly sentAt: string;
  readonly receiveCount: number;
}

type Json = Record<string, unknown>;

const text = (value: unknown): string | undefined => (typeof value === "string" ? value : undefined);
const object = (value: unknown): Json | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? (value as Json) : undefined;

/** The kind, item, policy and failure a body shows. */
function readBody(body: string): Pick<DeadLetter, "kind" | "itemId" | "policy"> & { reason?: string } {
  let parsed: Json | undefined;
  try {
    parsed = object(JSON.parse(body));
  } catch {
    // An unparseable body still replays: it is then rejected with its reason.
  }
  if (!parsed) return { kind: "unreadable", itemId: undefined, policy: undefined };
  const detail = object(parsed.detail);
  const eventType = text(parsed["detail-type"]);
  if (eventType && detail)
    return {
      kind: eventType,
      itemId: text(detail.itemId) ?? text(detail.id),
      policy: text(detail.policyId) ?? text(detail.policy),
    };
  const context = object(parsed.requestContext);
  if (context) {
    const fn = text(context.functionArn)?.split(":")[6] ?? "function";
    const error = object(parsed.responsePayload);
    return {
      kind: `${fn} run`,
      itemId: undefined,
      policy: undefined,
      reason: [text(context.condition), text(error?.errorType), text(error?.errorMessage)]
        .filter(Boolean)
        .join(": "),
    };
  }
  return { kind: "item", itemId: text(parsed.id), policy: text(parsed.policy) };
}

/** Describes one dead letter; the failure comes from the store's note, the body, or the bus's attributes. */
export async function describeDeadLetter(
  message: QueueMessage,
  failureOf?: (messageId: string) => Promise<{ reason: string } | undefined>,
): Promise<DeadLetter> {
  const { reason: bodyReason, ...read } = readBody(message.body);
  const bus = message.attributes ?? {};
  const busReason = bus.ERROR_CODE
    ? [bus.ERROR_CODE, bus.ERROR_MESSAGE].filter(Boolean).join(": ")
    : undefined;
  return {
    messageId: message.messageId,
    ...read,
    reason: (await failureOf?.(message.messageId))?.reason ?? bodyReason ?? busReason,
    sentAt: new Date(message.sentAt).toISOString(),
    receiveCount: message.receiveCount,
  };
}
