/**
 * The async lane in the local mode, wired as the stack deploys it (`infra/constructs/async/async-lane.ts`):
 * the batch lane's queue feeds the submit function through the one local poller, which gathers up
 * to an object's worth of records per invocation (the mapping's batch size, and a window);
 * the async endpoint's stand-in (`async-endpoint.ts`) runs the objects on the local container and
 * puts its notifications on a queue of their own, dead-lettered after the receive limit; the
 * result function consumes that queue one notification per invocation. The two functions get
 * their own environment: their SageMaker client reaches the stand-in, not the container.
 */
import type { SqsQueue } from "../../shared/adapters/sqs-queue.ts";
import { asyncItemsPerObject } from "../../shared/domain/async/async-objects.ts";
import { FUNCTION_ENV } from "../../shared/domain/function-env.ts";
import {
  asyncSubmitMapping,
  EVENT_SOURCE_MAPPINGS,
} from "../../shared/domain/topology/event-source-mapping.ts";
import { MAX_RECEIVE_COUNT } from "../../shared/domain/topology.ts";
import {
  type LocalAsyncEndpoint,
  type LocalAsyncEndpointOptions,
  startLocalAsyncEndpoint,
} from "./async-endpoint.ts";
import { type CreatesQueue, LOCAL_ARN, redriveTo } from "./local-queues.ts";
import { type SqsPoller, startSqsPoller } from "./sqs/sqs-poller.ts";

/** The bucket name the local `s3://` locations use (the folder stands in for it). */
export const LOCAL_BUCKET = "local-pipeline-bucket";

/** The async endpoint's name locally. */
export const LOCAL_ASYNC_ENDPOINT = "decision-endpoint-async";

/** Options of {@link startLocalAsyncLane}. */
export interface LocalAsyncLaneOptions {
  /** The functions' environment (the stand-ins, the table, the bus); the lane's functions get a copy. */
  readonly env: Readonly<Record<string, string>>;
  readonly createQueue: CreatesQueue;
  /** The batch lane's queue and its dead-letter queue. */
  readonly batch: SqsQueue;
  readonly batchDeadLetters: SqsQueue;
  /** The bucket's folder and the container's URL. */
  readonly folder: string;
  readonly containerUrl: string;
  /** Result function pollers (0: none; a test runs its own). @default 1 */
  readonly resultPollers?: number;
  /** The notifications' visibility timeout. @default 120 */
  readonly resultsVisibilitySeconds?: number;
  /** Items per object. @default asyncItemsPerObject() */
  readonly itemsPerObject?: number;
  /** How long the submit poller gathers records once the first arrived. @default 1000 */
  readonly gatherMs?: number;
  /** Extra settings of the lane's functions (MAX_ITEM_FAILURES and the like). */
  readonly settings?: Readonly<Record<string, string>>;
  /** The stand-in's test seams. */
  readonly faults?: Pick<LocalAsyncEndpointOptions, "fail" | "rewriteAnswer">;
}

/** The running lane. */
export interface LocalAsyncLane {
  readonly endpoint: LocalAsyncEndpoint;
  readonly notifications: SqsQueue;
  readonly notificationsDeadLetters: SqsQueue;
  /** The lane's functions' environment (a result function started elsewhere uses it). */
  readonly env: Readonly<Record<string, string>>;
  readonly submit: SqsPoller;
  readonly results: SqsPoller[];
  stop(): Promise<void>;
}

/** How the local wiring asks for the async lane. */
export interface AsyncLaneWiring {
  /** URL of the decision container. */
  readonly endpointUrl: string;
  /** Folder standing in for the pipeline bucket; no batch lane when unset. */
  readonly batchFolder?: string;
  /**
   * Where the batch lane's items are scored: the async endpoint's stand-in through the submit and
   * result functions (as the stack deploys by default), or the decide function's real-time calls.
   * @default "async"
   */
  readonly batchLane?: "async" | "realtime";
  /** The async lane's settings and test seams. */
  readonly asyncLane?: Pick<
    LocalAsyncLaneOptions,
    "resultPollers" | "resultsVisibilitySeconds" | "itemsPerObject" | "gatherMs" | "settings" | "faults"
  >;
}

/** The async lane on the batch queue, unless the batch lane is real-time (or there is none). */
export async function startAsyncLaneOf(
  wiring: AsyncLaneWiring,
  queues: { readonly batch?: SqsQueue; readonly batchDeadLetters?: SqsQueue },
  env: Readonly<Record<string, string>>,
  createQueue: CreatesQueue,
): Promise<LocalAsyncLane | undefined> {
  if (wiring.batchLane === "realtime" || !wiring.batchFolder || !queues.batch || !queues.batchDeadLetters)
    return undefined;
  return startLocalAsyncLane({
    ...wiring.asyncLane,
    env,
    createQueue,
    batch: queues.batch,
    batchDeadLetters: queues.batchDeadLetters,
    folder: wiring.batchFolder,
    containerUrl: wiring.endpointUrl,
  });
}

/** Starts the stand-in, the notifications queue and the two functions' pollers. */
export async function startLocalAsyncLane(options: LocalAsyncLaneOptions): Promise<LocalAsyncLane> {
  const notificationsDeadLetters = await options.createQueue("async-results-dlq");
  const notifications = await options.createQueue("async-results", {
    VisibilityTimeout: String(options.resultsVisibilitySeconds ?? 120),
    ...redriveTo("async-results-dlq", MAX_RECEIVE_COUNT),
  });
  const endpoint = await startLocalAsyncEndpoint({
    endpointName: LOCAL_ASYNC_ENDPOINT,
    folder: options.folder,
    bucket: LOCAL_BUCKET,
    containerUrl: options.containerUrl,
    notifications,
    ...options.faults,
  });
  const env: Record<string, string> = {
    ...options.env,
    AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME: endpoint.url,
    [FUNCTION_ENV.ASYNC_ENDPOINT_NAME]: LOCAL_ASYNC_ENDPOINT,
    [FUNCTION_ENV.ASYNC_LOCATION_BUCKET]: LOCAL_BUCKET,
    [FUNCTION_ENV.BATCH_QUEUE_URL]: options.batch.url,
    [FUNCTION_ENV.BATCH_DLQ_URL]: options.batchDeadLetters.url,
    ...options.settings,
  };
  const { createAsyncSubmitHandler, submitDependenciesFromEnv } = await import(
    "../../functions/async-submit.ts"
  );
  const { createAsyncResultsHandler, resultDependenciesFromEnv } = await import(
    "../../functions/async-results.ts"
  );
  const submitDeps = submitDependenciesFromEnv(env);
  const itemsPerObject = options.itemsPerObject ?? asyncItemsPerObject();
  // An object's worth of records per invocation, gathered for a second, not the deployed 30 s.
  const submit = startSqsPoller({
    queue: options.batch,
    queueArn: `${LOCAL_ARN}:batch`,
    handler: createAsyncSubmitHandler(async () => ({ ...(await submitDeps), itemsPerObject }), env),
    mapping: asyncSubmitMapping(itemsPerObject),
    gatherMs: options.gatherMs ?? 1000,
    functionName: "async-submit",
  });
  const resultDeps = resultDependenciesFromEnv(env);
  const results = Array.from({ length: options.resultPollers ?? 1 }, () =>
    startSqsPoller({
      queue: notifications,
      queueArn: `${LOCAL_ARN}:async-results`,
      handler: createAsyncResultsHandler(() => resultDeps),
      mapping: EVENT_SOURCE_MAPPINGS.asyncResults,
      functionName: "async-results",
    }),
  );
  return {
    endpoint,
    notifications,
    notificationsDeadLetters,
    env,
    submit,
    results,
    async stop() {
      await Promise.all([submit, ...results].map((poller) => poller.stop()));
      await endpoint.stop();
      const { destroyClients } = await import("../../functions/support/clients.ts");
      destroyClients(env);
    },
  };
}
