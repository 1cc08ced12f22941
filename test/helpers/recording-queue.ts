/**
 * A message queue that keeps what it is sent, for tests of batch intake (intake only sends).
 */
import type { MessageQueue, OutgoingMessage } from "../../shared/domain/message-queue.ts";

/** A queue that appends every message sent to it to `sent`. */
export function recordingQueue(sent: { push(...messages: OutgoingMessage[]): unknown }): MessageQueue {
  return {
    url: "memory://batch",
    sendBatch: async (messages: readonly OutgoingMessage[]) => {
      sent.push(...messages);
      return [];
    },
  } as unknown as MessageQueue;
}
