/**
 * The local stand-ins the wiring starts first: DynamoDB Local with the decisions table, local SQS
 * and the event bus, each on its port (a fixed port is checked free first), and the functions'
 * settings that point at them.
 */
import { join } from "node:path";
import { ensureDecisionsTable } from "../../shared/adapters/dynamodb/dynamodb-admin.ts";
import { EVENT_SOURCE, PIPELINE_DETAIL_TYPES } from "../../shared/domain/events.ts";
import { FUNCTION_ENV } from "../../shared/domain/function-env.ts";
import { startDynamoDbLocal } from "./dynamodb/dynamodb-local.ts";
import { startEventBus } from "./event-bus.ts";
import { ensurePortFree } from "./ports.ts";
import { startLocalSqs } from "./sqs/sqs-server.ts";

/** The table name the local stand-ins use. */
export const LOCAL_TABLE = "decisions";
/** The decision endpoint's name as the local functions know it (`DECISION_ENDPOINT_NAME`). */
export const LOCAL_DECISION_ENDPOINT = "decision-endpoint";

/** What the stand-ins need: their ports, DynamoDB Local's folder, the undo list, a bus fault. */
export interface StandInOptions {
  /** Ports of the stand-ins (0: a free one; a fixed port is checked free first). */
  readonly ports: { readonly dynamodb: number; readonly sqs: number; readonly bus: number };
  /** Folder for DynamoDB Local's data; in memory when unset. */
  readonly dynamoDbPath?: string;
  /** Folder for the queues' and the bus's journals (messages and events not yet done); in memory when unset. */
  readonly queuesPath?: string;
  /** Events the bus's log keeps (`decide events` reads it). @default every event */
  readonly recentEvents?: number;
  /** Makes the bus fail matching PutEvents entries. */
  readonly hooks?: { readonly failBusEntry?: (entry: Record<string, unknown>) => boolean };
  /** Each part that starts registers its stop here first, so a failed start can undo it. */
  readonly started: (() => Promise<unknown>)[];
  /** Names each part as it starts ("...: starting...") and where it listens once it does. */
  readonly say?: (line: string) => void;
}

/**
 * Events the local mode's bus keeps for `decide events`: a few batches' worth (an event is about
 * 1 KiB, so at most about 10 MiB), however long it runs.
 */
export const LOCAL_RECENT_EVENTS = 10_000;

/** What the functions' settings are made of, besides where the stand-ins listen. */
export interface FunctionSettingsOptions {
  /** URL the decide function calls as the SageMaker runtime. */
  readonly endpointUrl: string;
  /** Repository root: the policies folder. */
  readonly root: string;
  readonly intake: { readonly maxItemFailures: number; readonly maxReceiveCount: number };
  /** Folder standing in for the pipeline bucket; no batch lane when unset. */
  readonly batchFolder?: string;
  /** Extra function settings (ENDPOINT_TIMEOUT_MS and the like). */
  readonly settings?: Readonly<Record<string, string>>;
}

/** A free loopback port. */
export async function freePort(): Promise<number> {
  const { createServer } = await import("node:net");
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address() as { port: number };
      server.close(() => resolve(port));
    });
  });
}

/** The running stand-ins: DynamoDB Local (with the table), local SQS and the event bus. */
export type StandIns = Awaited<ReturnType<typeof startStandIns>>;

/** Starts DynamoDB Local, local SQS and the bus, each on its port (checked free first). */
export async function startStandIns(options: StandInOptions) {
  const { started, hooks = {} } = options;
  const say = options.say ?? (() => undefined);
  await ensurePortFree("dynamodb", options.ports.dynamodb);
  say("DynamoDB Local: starting Java...");
  const dynamo = await startDynamoDbLocal({
    port: options.ports.dynamodb || (await freePort()),
    ...(options.dynamoDbPath ? { path: options.dynamoDbPath } : {}),
  });
  started.push(() => dynamo.stop());
  await ensureDecisionsTable(dynamo.endpoint, LOCAL_TABLE);
  say(
    `DynamoDB Local: ${dynamo.endpoint}${options.dynamoDbPath ? `, data in ${options.dynamoDbPath}` : " (in memory)"}`,
  );
  await ensurePortFree("sqs", options.ports.sqs);
  const sqs = await startLocalSqs({
    port: options.ports.sqs || (await freePort()),
    hostname: "127.0.0.1",
    ...(options.queuesPath ? { path: join(options.queuesPath, "sqs.jsonl") } : {}),
  });
  started.push(() => sqs.close());
  const sqsEndpoint = sqs.endpoint;
  await ensurePortFree("bus", options.ports.bus);
  const bus = await startEventBus({
    name: "decisions",
    pipelineOnly: {
      source: EVENT_SOURCE,
      detailTypes: PIPELINE_DETAIL_TYPES,
      principals: [LOCAL_ACCESS_KEYS.pipeline],
    },
    ...(options.ports.bus ? { port: options.ports.bus } : {}),
    ...(hooks.failBusEntry ? { failEntry: hooks.failBusEntry } : {}),
    ...(options.queuesPath ? { journal: join(options.queuesPath, "bus.jsonl") } : {}),
    ...(options.recentEvents ? { recentEvents: options.recentEvents } : {}),
  });
  started.push(() => bus.stop());
  say(`queues: local SQS at ${sqsEndpoint}; event bus: ${bus.endpoint}`);
  return { dynamo, sqs, sqsEndpoint, bus };
}

/**
 * Powertools' logging and metrics settings for a process that hosts the functions: quiet (errors
 * only, no EMF lines), so the local mode's terminal shows its summary, not every function's JSON
 * logs. Unlike the functions' wiring, these are the process's own: Powertools reads them from
 * the process environment as each function module creates its logger and metrics. A value the
 * person already set wins (`POWERTOOLS_LOG_LEVEL=DEBUG npm start` shows the functions' logs).
 */
export const LOCAL_POWERTOOLS = {
  POWERTOOLS_LOG_LEVEL: "ERROR",
  POWERTOOLS_METRICS_DISABLED: "true",
  POWERTOOLS_DEV: "false",
} as const;

/** Sets {@link LOCAL_POWERTOOLS} where the process environment leaves them unset. */
export function quietPowertools(env: NodeJS.ProcessEnv = process.env): void {
  for (const [name, value] of Object.entries(LOCAL_POWERTOOLS)) env[name] ??= value;
}

/**
 * The access keys the stand-ins tell apart, as IAM tells roles apart: the pipeline's functions,
 * and everyone else (operators and upstream producers; what `npm start` tells a person to use).
 */
// DynamoDB Local accepts only letters and digits in an access key.
export const LOCAL_ACCESS_KEYS = { pipeline: "localpipeline", operator: "local" } as const;

/** The functions' settings on the stand-ins, as the CDK app sets them on AWS. */
export function wiringEnvironment(options: FunctionSettingsOptions, parts: StandIns): Record<string, string> {
  return {
    AWS_REGION: "us-east-1",
    // The functions sign as the pipeline (the local bus lets only them put its own events).
    AWS_ACCESS_KEY_ID: LOCAL_ACCESS_KEYS.pipeline,
    AWS_SECRET_ACCESS_KEY: "local",
    AWS_ENDPOINT_URL_DYNAMODB: parts.dynamo.endpoint,
    AWS_ENDPOINT_URL_SQS: parts.sqsEndpoint,
    AWS_ENDPOINT_URL_EVENTBRIDGE: parts.bus.endpoint,
    AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME: options.endpointUrl,
    [FUNCTION_ENV.DECISIONS_TABLE]: LOCAL_TABLE,
    [FUNCTION_ENV.EVENT_BUS_NAME]: parts.bus.name,
    [FUNCTION_ENV.DECISION_ENDPOINT_NAME]: LOCAL_DECISION_ENDPOINT,
    [FUNCTION_ENV.POLICIES_DIR]: join(options.root, "events", "policies"),
    [FUNCTION_ENV.MAX_RECEIVE_COUNT]: String(options.intake.maxReceiveCount),
    [FUNCTION_ENV.MAX_ITEM_FAILURES]: String(options.intake.maxItemFailures),
    ...(options.batchFolder ? { [FUNCTION_ENV.BATCH_FOLDER]: options.batchFolder } : {}),
    ...options.settings,
  };
}
