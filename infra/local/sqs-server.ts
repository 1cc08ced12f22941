/**
 * The local SQS (`local-aws-sqs`, in process) with one correction: a message moved to a
 * dead-letter queue keeps the time it was first sent. AWS keeps a standard queue's enqueue
 * timestamp when it dead-letters a message; the stand-in writes a new one at the move, so every
 * local dead letter looked seconds old and `decide replay --older-than` could not be tried. The
 * stand-in keeps the message id across the move, so the server remembers when each id was first
 * sent and writes that `SentTimestamp` into what ReceiveMessage answers.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createRequestHandler } from "local-aws-sqs";

/** Options of {@link startLocalSqs}. */
export interface LocalSqsOptions {
  /** 0 picks a free one. */
  readonly port: number;
  readonly hostname: string;
}

type Json = Record<string, unknown>;

/** Keeps first-sent times by message id, from the answers to SendMessage and SendMessageBatch. */
function rememberSent(firstSent: Map<string, string>, action: string, answer: Json): void {
  const now = String(Date.now());
  const ids =
    action === "SendMessage"
      ? [answer.MessageId]
      : ((answer.Successful ?? []) as { MessageId?: unknown }[]).map((entry) => entry.MessageId);
  for (const id of ids) if (typeof id === "string" && !firstSent.has(id)) firstSent.set(id, now);
}

/** Writes each received message's first-sent time into its SentTimestamp. */
function restoreSent(firstSent: Map<string, string>, answer: Json): void {
  for (const message of (answer.Messages ?? []) as { MessageId?: string; Attributes?: Json }[]) {
    const sent = message.MessageId ? firstSent.get(message.MessageId) : undefined;
    if (sent && message.Attributes?.SentTimestamp !== undefined) message.Attributes.SentTimestamp = sent;
  }
}

/** Rewrites the JSON answer of the actions that carry message ids; everything else passes through. */
function correctAnswers(
  firstSent: Map<string, string>,
  request: IncomingMessage,
  response: ServerResponse,
): void {
  const action = String(request.headers["x-amz-target"] ?? "").split(".")[1] ?? "";
  if (!["SendMessage", "SendMessageBatch", "ReceiveMessage"].includes(action)) return;
  const end = response.end.bind(response) as (chunk?: unknown) => ServerResponse;
  response.end = ((chunk?: unknown) => {
    if (typeof chunk !== "string" || response.statusCode !== 200) return end(chunk);
    try {
      const answer = JSON.parse(chunk) as Json;
      if (action === "ReceiveMessage") restoreSent(firstSent, answer);
      else rememberSent(firstSent, action, answer);
      return end(JSON.stringify(answer));
    } catch {
      return end(chunk); // Not JSON (the query protocol): unchanged.
    }
  }) as typeof response.end;
}

/** Starts the local SQS on `hostname:port`. */
export async function startLocalSqs(options: LocalSqsOptions): Promise<Server> {
  const { requestHandler, service } = createRequestHandler({
    port: options.port,
    hostname: options.hostname,
  });
  const firstSent = new Map<string, string>();
  const server = createServer((request, response) => {
    correctAnswers(firstSent, request, response);
    void requestHandler(request, response);
  });
  await new Promise<void>((resolve) => server.listen(options.port, options.hostname, resolve));
  // Queue URLs name the port the server really listens on.
  service.PORT = (server.address() as AddressInfo).port;
  return server;
}
