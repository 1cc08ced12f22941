/**
 * The local SQS (`local-aws-sqs`, in process), its messages kept on disk when given a path
 * (`sqs-persistence.ts`), with one correction: a message moved to a
 * dead-letter queue keeps the time it was first sent. AWS keeps a standard queue's enqueue
 * timestamp when it dead-letters a message; the stand-in writes a new one at the move, so every
 * local dead letter looked seconds old and `decide replay --older-than` could not be tried. The
 * stand-in keeps the message id across the move, so the server remembers when each id was first
 * sent and writes that `SentTimestamp` into what ReceiveMessage answers.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { createRequestHandler } from "local-aws-sqs";
import { persistQueues } from "./sqs-persistence.ts";

/** Options of {@link startLocalSqs}. */
export interface LocalSqsOptions {
  /** 0 picks a free one. */
  readonly port: number;
  readonly hostname: string;
  /** The journal that keeps the messages across restarts; in memory when unset. */
  readonly path?: string;
}

/** A running local SQS. */
export interface LocalSqs {
  readonly server: Server;
  /** `http://host:port`, what AWS_ENDPOINT_URL_SQS names. */
  readonly endpoint: string;
  /** Messages an earlier run left, by queue name, put back as each queue is created. */
  readonly recovered: Readonly<Record<string, number>>;
  /** Stops listening and closes the journal. */
  close(): Promise<void>;
}

type Json = Record<string, unknown>;

/** Writes each received message's first-sent time into its SentTimestamp. */
function restoreSent(firstSent: (messageId: string) => number | undefined, answer: Json): void {
  for (const message of (answer.Messages ?? []) as { MessageId?: string; Attributes?: Json }[]) {
    const sent = message.MessageId ? firstSent(message.MessageId) : undefined;
    if (sent !== undefined && message.Attributes?.SentTimestamp !== undefined)
      message.Attributes.SentTimestamp = String(sent);
  }
}

/** Rewrites the JSON answer of ReceiveMessage; everything else passes through. */
function correctAnswers(
  firstSent: (messageId: string) => number | undefined,
  request: IncomingMessage,
  response: ServerResponse,
): void {
  const action = String(request.headers["x-amz-target"] ?? "").split(".")[1] ?? "";
  if (action !== "ReceiveMessage") return;
  const end = response.end.bind(response) as (chunk?: unknown) => ServerResponse;
  response.end = ((chunk?: unknown) => {
    if (typeof chunk !== "string" || response.statusCode !== 200) return end(chunk);
    try {
      const answer = JSON.parse(chunk) as Json;
      restoreSent(firstSent, answer);
      return end(JSON.stringify(answer));
    } catch {
      return end(chunk); // Not JSON (the query protocol): unchanged.
    }
  }) as typeof response.end;
}

/** Starts the local SQS on `hostname:port`. */
export async function startLocalSqs(options: LocalSqsOptions): Promise<LocalSqs> {
  const { requestHandler, service } = createRequestHandler({
    port: options.port,
    hostname: options.hostname,
  });
  const kept = persistQueues(options.path);
  const recovered = kept.counts();
  const server = createServer((request, response) => {
    // Queues created by the last request are instrumented (and refilled) before this one runs,
    // and again after it, before a timer (a redrive) can put a message into a new queue.
    kept.adopt(service);
    correctAnswers(kept.firstSent, request, response);
    void requestHandler(request, response).finally(() => kept.adopt(service));
  });
  await new Promise<void>((resolve) => server.listen(options.port, options.hostname, resolve));
  // Queue URLs name the port the server really listens on.
  const { port } = server.address() as AddressInfo;
  service.PORT = port;
  let closing: Promise<void> | undefined;
  return {
    server,
    endpoint: `http://${options.hostname}:${port}`,
    recovered,
    close: () => {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        // Keep-alive clients would hold the close open; what they send next is refused anyway.
        server.closeAllConnections();
      }).then(() => kept.close());
      return closing;
    },
  };
}
