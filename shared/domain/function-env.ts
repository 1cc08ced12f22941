/**
 * The Lambda functions' environment variable names, each written once: the constructs set them
 * (`infra/constructs`), the handlers read them (`functions/`), the local mode hands them to the
 * same handlers (`infra/local`). A name misspelt on either side is a compile error, not a
 * function that starts without its setting.
 */

const NAMES = [
  "ASYNC_ENDPOINT_NAME",
  "ASYNC_ITEM_CONCURRENCY",
  "ASYNC_LOCATION_BUCKET",
  "ASYNC_MAX_INSTANCES",
  "ASYNC_MODEL",
  "ASYNC_OBJECT_ATTEMPTS",
  "AUDIT_WINDOW_DAYS",
  "BATCH_BUCKET",
  "BATCH_DLQ_URL",
  "BATCH_FILES_QUEUE_URL",
  "BATCH_FOLDER",
  "BATCH_QUEUE_ARN",
  "BATCH_QUEUE_URL",
  "COGNITO_DOMAIN",
  "CONCURRENCY_PER_INSTANCE",
  "DEAD_LETTER_ROUTES",
  "DECISIONS_TABLE",
  "DECISION_ENDPOINT_NAME",
  "DRIFT_PERIOD_HOURS",
  "ENDPOINT_ATTEMPTS",
  "ENDPOINT_BATCH_ITEMS",
  "ENDPOINT_BATCH_WINDOW_MS",
  "ENDPOINT_TIMEOUT_MS",
  "EVENT_BUS_NAME",
  "FOLLOWED_ENDPOINT_NAME",
  "INTAKE_DLQ_URL",
  "INTAKE_MAPPING_UUID",
  "INTAKE_QUEUE_ARN",
  "INTAKE_QUEUE_URL",
  "MAX_ITEM_FAILURES",
  "MAX_RECEIVE_COUNT",
  "OVERLOAD_BACKOFF_FIRST_SECONDS",
  "OVERLOAD_BACKOFF_MAX_SECONDS",
  "OVERLOAD_BACKOFF_SHORTEST_FIRST_SECONDS",
  "POLICIES_DIR",
  "PROBED_ENDPOINT_NAME",
  "PROBE_CALLS_PER_RUN",
  "PROBE_POLICY",
  "PROPOSALS_BUCKET",
  "PROPOSALS_PREFIX",
  "PUBLISH_LEASE_MS",
  "RECALIBRATION_MIN_LABELS",
  "REVIEW_CHANGE_WINDOW_MS",
  "REVIEW_CLAIM_MS",
  "REVIEW_PAGE_SIZE",
  "REVIEW_WITHIN_MINUTES",
  "SECONDS_PER_ITEM",
  "TIER_ENDPOINTS",
  "TIER_MODELS",
  "USER_POOL_CLIENT_ID",
  "USER_POOL_ID",
] as const;

/** A variable the pipeline's functions read. */
export type FunctionEnvName = (typeof NAMES)[number];

/** Each function variable's name, by itself: `FUNCTION_ENV.DECISIONS_TABLE`. */
export const FUNCTION_ENV = Object.freeze(Object.fromEntries(NAMES.map((name) => [name, name]))) as {
  readonly [K in FunctionEnvName]: K;
};
