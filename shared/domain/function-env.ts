/**
 * The Lambda functions' environment variable names, each written once: the constructs set them
 * (`infra/constructs`), the handlers read them (`functions/`), the local mode hands them to the
 * same handlers (`infra/local`). A name misspelt on either side is a compile error, not a
 * function that starts without its setting.
 *
 * The command line reads the same deployed outputs from the same variables (`DECISIONS_TABLE`,
 * `INTAKE_QUEUE_URL`, `BATCH_QUEUE_URL`, ...), so it uses these constants too. Its few names of
 * its own (`CLI_ENV`: the intake's dead letters as `DLQ_URL`, the review queue, the local mode's
 * ports) are declared here, beside them, rather than in a file of their own: the local mode
 * (`infra/local`) sets them and may not import `cli/`, and one file holding every name the
 * pipeline's processes outside the container read lets a reader, and the test that no name is
 * spelt out elsewhere, find each in one place. The container's names are its own
 * (`container-env.ts`); the AWS SDK's (`AWS_REGION`, `AWS_ENDPOINT_URL_*`) and Powertools' are
 * the libraries'.
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
  "USER_POOL_CLIENT_ID",
  "USER_POOL_ID",
] as const;

/** A variable the pipeline's functions read. */
export type FunctionEnvName = (typeof NAMES)[number];

/** Each function variable's name, by itself: `FUNCTION_ENV.DECISIONS_TABLE`. */
export const FUNCTION_ENV = Object.freeze(Object.fromEntries(NAMES.map((name) => [name, name]))) as {
  readonly [K in FunctionEnvName]: K;
};

/** The command line's own variables: what the deployed outputs and the local mode give it beyond the functions' names. */
const CLI_NAMES = [
  "DECIDE_LOCAL_BUS_PORT",
  "DECIDE_LOCAL_DYNAMODB_PORT",
  "DECIDE_LOCAL_ENDPOINT_PORT",
  "DECIDE_LOCAL_PORT_BASE",
  "DECIDE_LOCAL_REVIEW_PORT",
  "DECIDE_LOCAL_SQS_PORT",
  "DLQ_URL",
  "REVIEW_QUEUE_URL",
] as const;

/** A variable only the command line reads (the local mode sets it). */
export type CliEnvName = (typeof CLI_NAMES)[number];

/** Each command-line variable's name, by itself: `CLI_ENV.DLQ_URL`. */
export const CLI_ENV = Object.freeze(Object.fromEntries(CLI_NAMES.map((name) => [name, name]))) as {
  readonly [K in CliEnvName]: K;
};
