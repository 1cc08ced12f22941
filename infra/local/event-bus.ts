/**
 * A local EventBridge bus: a PutEvents endpoint (JSON 1.1, `AWSEvents.PutEvents`) and rules
 * that match event patterns and deliver to targets, as the cloud bus does (asynchronously, after
 * answering). It is one named bus: entries for any other bus are refused with
 * ResourceNotFoundException, so a mistyped `--event-bus` fails instead of vanishing. Like the
 * deployed bus, it can refuse the pipeline's own source and detail types to callers other than
 * the pipeline's functions (told apart by the access key they sign with). Faults can be injected
 * per entry, since a real bus cannot fail on demand. It keeps a log of the events it accepted
 * (bounded by `recentEvents`), which `decide events` reads at `GET /local/events`.
 */
import { randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { type EventPattern, matchesPattern } from "../../shared/domain/event-pattern.ts";
import { EventLog } from "./event-log.ts";

/** Where `decide events` reads the log: a path of this stand-in's own, beside PutEvents at `/`. */
export const EVENT_LOG_PATH = "/local/events";

/** An event as targets receive it (the EventBridge event envelope). */
export interface BusEvent {
  readonly version: "0";
  readonly id: string;
  readonly "detail-type": string;
  readonly source: string;
  readonly account: string;
  readonly time: string;
  readonly region: string;
  readonly resources: string[];
  readonly detail: Record<string, unknown>;
}

/** A rule: a pattern and what to do with matching events. */
export interface BusRule {
  readonly name: string;
  readonly pattern: EventPattern;
  readonly target: (event: BusEvent) => Promise<void>;
  /** Where an event goes that failed every try, as a rule target's dead-letter queue. @default nowhere */
  readonly deadLetter?: (event: BusEvent, error: string) => Promise<void>;
}

/** Options of {@link startEventBus}. */
export interface EventBusOptions {
  readonly port?: number;
  readonly name?: string;
  readonly rules?: readonly BusRule[];
  /** Fault injection: entries for which this returns true fail with InternalFailure. */
  readonly failEntry?: (entry: Record<string, unknown>) => boolean;
  /** Delivery tries per target before the event is recorded as undeliverable. @default 3 */
  readonly deliveryAttempts?: number;
  /**
   * The bus's resource policy, as deployed (`infra/constructs/pipeline-bus.ts`): entries with
   * this source, or one of these detail types, are refused unless the caller's access key (read
   * from the request's SigV4 credential) is one of `principals`. @default none: anyone may put anything
   */
  readonly pipelineOnly?: {
    readonly source: string;
    readonly detailTypes: readonly string[];
    readonly principals: readonly string[];
  };
  /** Events the log keeps, the oldest dropped first. @default every event (tests count them all) */
  readonly recentEvents?: number;
}

/** A running local bus. */
export interface LocalEventBus {
  readonly endpoint: string;
  readonly name: string;
  /** The events accepted, in order: all of them, or the last `recentEvents`. */
  readonly events: BusEvent[];
  /** Deliveries that failed every try. */
  readonly undeliverable: { rule: string; event: BusEvent; error: string }[];
  addRule(rule: BusRule): void;
  /** Resolves when every delivery started so far has finished. */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

/** Starts the bus on 127.0.0.1. */
export async function startEventBus(options: EventBusOptions = {}): Promise<LocalEventBus> {
  const name = options.name ?? "default";
  const rules: BusRule[] = [...(options.rules ?? [])];
  const log = new EventLog<BusEvent>(options.recentEvents ?? Number.MAX_SAFE_INTEGER);
  const undeliverable: LocalEventBus["undeliverable"] = [];
  const pending = new Set<Promise<void>>();
  const deliver = deliveryTo(rules, options.deliveryAttempts ?? 3, undeliverable, pending);

  const server: Server = createServer((request, response) => {
    void handle(request, response).catch((error: unknown) => {
      reply(response, 500, { __type: "InternalException", message: (error as Error).message });
    });
  });

  async function handle(request: IncomingMessage, response: ServerResponse): Promise<void> {
    if (request.method === "GET") {
      readLog(log, request, response);
      return;
    }
    const chunks: Buffer[] = [];
    for await (const chunk of request) chunks.push(chunk as Buffer);
    const target = request.headers["x-amz-target"];
    const body =
      target === "AWSEvents.PutEvents"
        ? (JSON.parse(Buffer.concat(chunks).toString("utf8")) as { Entries?: Record<string, unknown>[] })
        : {};
    const entries = body.Entries ?? [];
    const refusal = refusalOf(target, entries, name);
    if (refusal) {
      reply(response, 400, refusal);
      return;
    }
    const accepted: BusEvent[] = [];
    const caller = accessKeyOf(request.headers.authorization);
    const results = entries.map((entry) => {
      const refused = policyRefusal(entry, caller, options.pipelineOnly);
      const outcome = refused
        ? { result: refused }
        : options.failEntry?.(entry)
          ? { result: { ErrorCode: "InternalFailure", ErrorMessage: "injected failure" } }
          : entryOutcome(entry);
      if (outcome.event) accepted.push(outcome.event);
      return outcome.result;
    });
    reply(response, 200, {
      FailedEntryCount: results.filter((r) => "ErrorCode" in r).length,
      Entries: results,
    });
    for (const event of accepted) {
      log.append(event);
      deliver(event);
    }
  }

  await new Promise<void>((resolve) => server.listen(options.port ?? 0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const idle = async () => {
    while (pending.size > 0) await Promise.allSettled([...pending]);
  };
  return {
    endpoint: `http://127.0.0.1:${port}`,
    name,
    get events() {
      return log.events();
    },
    undeliverable,
    addRule: (rule) => rules.push(rule),
    idle,
    async stop() {
      await idle();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** `GET /local/events?after=N&limit=M`: the logged events after N (see `EventLog.after`). */
function readLog(log: EventLog<BusEvent>, request: IncomingMessage, response: ServerResponse): void {
  const url = new URL(request.url ?? "/", "http://bus");
  if (url.pathname !== EVENT_LOG_PATH) {
    reply(response, 404, { __type: "UnknownOperationException", message: `no GET ${url.pathname}` });
    return;
  }
  const after = Number(url.searchParams.get("after") ?? "0");
  const limit = Number(url.searchParams.get("limit") ?? "500");
  if (!Number.isInteger(after) || after < 0 || !Number.isInteger(limit) || limit < 1) {
    reply(response, 400, { __type: "ValidationException", message: "after and limit are whole numbers" });
    return;
  }
  reply(response, 200, log.after(after, limit));
}

/**
 * Delivers an event to every rule it matches, asynchronously (tracked in `pending`), each with
 * `attempts` tries; a delivery that fails every try is recorded in `undeliverable` and handed
 * to the rule's dead letter, when it has one.
 */
function deliveryTo(
  rules: readonly BusRule[],
  attempts: number,
  undeliverable: LocalEventBus["undeliverable"],
  pending: Set<Promise<void>>,
): (event: BusEvent) => void {
  return (event) => {
    for (const rule of rules) {
      if (!matchesPattern(rule.pattern, event)) continue;
      const delivery = (async () => {
        let error = "";
        for (let attempt = 1; attempt <= attempts; attempt++) {
          try {
            await rule.target(event);
            return;
          } catch (e) {
            error = (e as Error).message;
            await new Promise((resolve) => setTimeout(resolve, 20 * attempt));
          }
        }
        undeliverable.push({ rule: rule.name, event, error });
        await rule.deadLetter?.(event, error).catch(() => undefined);
      })();
      pending.add(delivery);
      void delivery.finally(() => pending.delete(delivery));
    }
  };
}

/** Why a whole request is refused (its operation, its entry count, a bus that is not this one). */
function refusalOf(
  target: string | string[] | undefined,
  entries: readonly Record<string, unknown>[],
  name: string,
): { __type: string; message: string } | undefined {
  if (target !== "AWSEvents.PutEvents")
    return { __type: "UnknownOperationException", message: `unsupported operation ${String(target)}` };
  if (entries.length === 0 || entries.length > 10)
    return { __type: "ValidationException", message: "1 to 10 entries per PutEvents call" };
  // One bus stands here: any other name (or ARN) is a bus that does not exist, as AWS answers.
  const elsewhere = entries.map(busNameOf).find((bus) => bus !== name);
  if (elsewhere !== undefined)
    return { __type: "ResourceNotFoundException", message: `Event bus ${elsewhere} does not exist.` };
  return undefined;
}

/** The access key a SigV4-signed request was signed with ("Credential=KEY/date/region/..."). */
function accessKeyOf(authorization: string | undefined): string | undefined {
  return /Credential=([^/,\s]+)\//.exec(authorization ?? "")?.[1];
}

/**
 * The per-entry error EventBridge gives an entry its bus policy denies (the `events:source` and
 * `events:detail-type` conditions are evaluated for each entry), or undefined when it may pass.
 */
function policyRefusal(
  entry: Record<string, unknown>,
  caller: string | undefined,
  policy: EventBusOptions["pipelineOnly"],
): { ErrorCode: string; ErrorMessage: string } | undefined {
  if (!policy || (caller !== undefined && policy.principals.includes(caller))) return undefined;
  if (entry.Source === policy.source)
    return {
      ErrorCode: "NotAuthorizedForSourceException",
      ErrorMessage: `Not authorized for the source ${policy.source}: only the pipeline's functions put it`,
    };
  if (typeof entry.DetailType === "string" && policy.detailTypes.includes(entry.DetailType))
    return {
      ErrorCode: "NotAuthorizedForDetailTypeException",
      ErrorMessage: `Not authorized for the detail-type ${entry.DetailType}: only the pipeline's functions put it`,
    };
  return undefined;
}

/** One entry's result, and the event it makes when it is well formed. */
function entryOutcome(entry: Record<string, unknown>): {
  result: { EventId: string } | { ErrorCode: string; ErrorMessage: string };
  event?: BusEvent;
} {
  if (
    typeof entry.Source !== "string" ||
    typeof entry.DetailType !== "string" ||
    typeof entry.Detail !== "string"
  ) {
    return {
      result: { ErrorCode: "MalformedDetail", ErrorMessage: "Source, DetailType and Detail are required" },
    };
  }
  let detail: Record<string, unknown>;
  try {
    detail = JSON.parse(entry.Detail) as Record<string, unknown>;
  } catch {
    return { result: { ErrorCode: "MalformedDetail", ErrorMessage: "Detail is not valid JSON" } };
  }
  const event: BusEvent = {
    version: "0",
    id: randomUUID(),
    "detail-type": entry.DetailType,
    source: entry.Source,
    account: "123456789012",
    time: new Date().toISOString(),
    region: "us-east-1",
    resources: (entry.Resources as string[] | undefined) ?? [],
    detail,
  };
  return { result: { EventId: event.id }, event };
}

/** The bus an entry names: its EventBusName, an ARN's last part, or "default" when unset. */
function busNameOf(entry: Record<string, unknown>): string {
  const named = typeof entry.EventBusName === "string" && entry.EventBusName ? entry.EventBusName : "default";
  return named.startsWith("arn:") ? named.slice(named.lastIndexOf("/") + 1) : named;
}

function reply(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/x-amz-json-1.1" });
  response.end(JSON.stringify(body));
}
