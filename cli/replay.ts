/**
 * `decide replay`: sends dead letters back where they came from, all of them (SQS redrive to the
 * source queue) or a filtered selection, with a dry run that lists what would move. A source
 * (`--from review`) names its dead-letter queue and its home from the routes that `npm start`
 * exports and the stack outputs (`DeadLetterRoutes`); `--dlq-url` with `--queue-url` names them
 * directly (the intake's, `DLQ_URL` and `INTAKE_QUEUE_URL`, by default). A rule's letters go to
 * the rule's target queue, each pipeline event checked against its decision record first. Uses
 * the AWS CLI's conventions: --region and --profile (or AWS_REGION and AWS_PROFILE), and
 * AWS_ENDPOINT_URL_SQS / _DYNAMODB for the local mode.
 */
import { parseArgs } from "node:util";
import type { AwsClientOptions } from "../shared/adapters/aws-clients.ts";
import { sqsClient } from "../shared/adapters/aws-clients.ts";
import { redriveAll } from "../shared/adapters/sqs-queue.ts";
import {
  DEAD_LETTER_SOURCES,
  DeadLetterRouteError,
  isDeadLetterSource,
  queueArnOf,
  RETURN_KIND,
  type ReturnKind,
  type RuleDelivery,
  routeOf,
} from "../shared/domain/dead-letters.ts";
import type { DecisionStore } from "../shared/domain/decision-store.ts";
import { CLI_ENV, FUNCTION_ENV } from "../shared/domain/function-env.ts";
import {
  homeQueue,
  homeRuleTarget,
  type ReplayReport,
  replayFiltered,
  type SendsHome,
} from "../shared/use-cases/replay.ts";
import { MissingSettingError, requiredFlag, UsageError } from "./args.ts";
import { awsOptions, decisionStore, queueAt } from "./aws.ts";
import type { CommandEnv, OneShotCommand, Printed } from "./command.ts";
import { parseDuration } from "./duration.ts";
import { closest } from "./suggest.ts";

export const replayUsage = `decide replay --from SOURCE [--policy ID] [--reason TEXT] [--older-than 2h] [--newer-than 1d] [--dry-run]
decide replay --dlq-url URL --queue-url URL [filters as above] [--dry-run]
decide replay --all (--from SOURCE | --dlq-arn ARN [--queue-arn ARN])

Sends matching dead letters home and deletes them from the dead-letter queue (--dry-run lists
them only): a queue's own dead letters go back to that queue, a rule's undelivered events to the
rule's target queue; a pipeline event goes only as the event its decision record stands for
(needs --table or DECISIONS_TABLE), a letter that is not is left in place. SOURCE is one of ${Object.keys(DEAD_LETTER_SOURCES).join(", ")}; its queue
and home come from --routes JSON or DEAD_LETTER_ROUTES (npm start exports it; deployed, the stack
output DeadLetterRoutes). job-failures are listed, never moved. --reason matches the failure noted
by the decide function (needs --table or DECISIONS_TABLE) or the one the bus or Lambda recorded.
Without --from, --dlq-url defaults to DLQ_URL (the intake's dead letters) and their home to
INTAKE_QUEUE_URL, as npm start exports them.
--all starts SQS's own redrive to the source queue (StartMessageMoveTask).
Common: --region, --profile (AWS CLI conventions).`;

const OPTIONS = {
  from: { type: "string" },
  routes: { type: "string" },
  "dlq-url": { type: "string" },
  "queue-url": { type: "string" },
  "dlq-arn": { type: "string" },
  "queue-arn": { type: "string" },
  all: { type: "boolean", default: false },
  policy: { type: "string" },
  reason: { type: "string" },
  "older-than": { type: "string" },
  "newer-than": { type: "string" },
  "dry-run": { type: "boolean", default: false },
  table: { type: "string" },
  region: { type: "string" },
  profile: { type: "string" },
} as const;

type Values = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; strict: true }>>["values"];

/** Where the letters are and where they go, from `--from` or the direct flags. */
interface Target {
  readonly dlqUrl: string;
  readonly kind: ReturnKind;
  readonly home?: string;
  /** What a rule delivers to its target queue (kind "rule"). */
  readonly deliver?: RuleDelivery;
}

function targetOf(values: Values, env: CommandEnv): Target {
  if (values.from !== undefined) return routeTarget(values.from, values.routes, env);
  const given = values["dlq-url"];
  const dlqUrl = given || env[CLI_ENV.DLQ_URL];
  if (!dlqUrl) throw new MissingSettingError("dlq-url", CLI_ENV.DLQ_URL, "--from SOURCE");
  // DLQ_URL holds the intake's dead letters, so its home is the intake queue exported with it;
  // a dead-letter queue named by flag has no home to assume.
  const home = values["queue-url"] || (given ? undefined : env[FUNCTION_ENV.INTAKE_QUEUE_URL]);
  if (home) return { dlqUrl, kind: RETURN_KIND.queue, home };
  if (values["dry-run"]) return { dlqUrl, kind: RETURN_KIND.none };
  throw new UsageError("--queue-url is required (where the letters go home), or name a --from SOURCE");
}

/** The target of `--from source`, from the routes `--routes` or DEAD_LETTER_ROUTES give. */
function routeTarget(source: string, routesFlag: string | undefined, env: CommandEnv): Target {
  if (!isDeadLetterSource(source)) {
    const guess = closest(source, Object.keys(DEAD_LETTER_SOURCES));
    throw new UsageError(
      `--from: unknown dead-letter source "${source}"${guess ? `; did you mean "${guess}"?` : ""} (one of ${Object.keys(DEAD_LETTER_SOURCES).join(", ")})`,
    );
  }
  const routes = routesFlag || env[FUNCTION_ENV.DEAD_LETTER_ROUTES];
  if (!routes) throw new MissingSettingError("routes", FUNCTION_ENV.DEAD_LETTER_ROUTES);
  try {
    const route = routeOf(routes, source);
    return {
      dlqUrl: route.dlqUrl,
      kind: route.kind,
      ...(route.queueUrl ? { home: route.queueUrl } : {}),
      ...(route.kind === RETURN_KIND.rule ? { deliver: route.deliver ?? "event" } : {}),
    };
  } catch (error) {
    if (error instanceof DeadLetterRouteError) throw new UsageError(`--from: ${error.message}`);
    throw error;
  }
}

function sendHomeOf(target: Target, aws: AwsClientOptions, store?: DecisionStore): SendsHome | undefined {
  if (target.kind === RETURN_KIND.queue) return homeQueue(queueAt(target.home!, aws));
  if (target.kind === RETURN_KIND.rule)
    return homeRuleTarget(queueAt(target.home!, aws), {
      deliver: target.deliver ?? "event",
      ...(store ? { store } : {}),
    });
  return undefined;
}

/** What `decide replay` was asked: SQS's redrive of a whole queue, or a filtered replay. */
type ReplayOptions =
  | {
      readonly kind: "redrive";
      readonly dlqArn: string;
      readonly destinationArn: string | undefined;
      readonly aws: AwsFlags;
    }
  | {
      readonly kind: "replay";
      readonly target: Target;
      readonly dryRun: boolean;
      readonly table: string | undefined;
      readonly filter: ReplayFilter;
      readonly aws: AwsFlags;
    };

type AwsFlags = { readonly region?: string | undefined; readonly profile?: string | undefined };
type ReplayFilter = Parameters<typeof replayFiltered>[0]["filter"];

/** What happened: the redrive task started, or the replay's report. */
type Replayed =
  | { readonly kind: "redrive"; readonly handle: string }
  | { readonly kind: "replay"; readonly report: ReplayReport; readonly dryRun: boolean };

/** The redrive of a whole dead-letter queue back to its source. */
function redriveOptions(values: Values, env: CommandEnv, aws: AwsFlags): ReplayOptions {
  const target = values.from !== undefined ? targetOf(values, env) : undefined;
  if (target && target.kind !== RETURN_KIND.queue)
    throw new UsageError(
      `--all redrives a queue's own dead letters; "${values.from}" goes home another way (drop --all)`,
    );
  const dlqArn = target ? queueArnOf(target.dlqUrl) : requiredFlag("dlq-arn", values["dlq-arn"]);
  // The home queue is named as the destination: items the decide function dead-lettered itself
  // were sent, not redriven, so SQS would not know where they came from.
  const destinationArn = values["queue-arn"] ?? (target?.home ? queueArnOf(target.home) : undefined);
  return { kind: "redrive", dlqArn, destinationArn, aws };
}

function parse(argv: string[], env: CommandEnv): ReplayOptions {
  const { values } = parseArgs({ args: argv, options: OPTIONS, strict: true });
  const aws = { region: values.region, profile: values.profile };
  if (values.all) return redriveOptions(values, env, aws);
  const target = targetOf(values, env);
  const dryRun = values["dry-run"] ?? false;
  if (target.kind === RETURN_KIND.none && !dryRun)
    throw new UsageError(`"${values.from}" letters are listed, not moved: add --dry-run`);
  const table = values.table ?? env[FUNCTION_ENV.DECISIONS_TABLE];
  if (values.reason && !table)
    throw new UsageError("--reason needs --table (or DECISIONS_TABLE) to read noted failures");
  if (target.kind === RETURN_KIND.rule && target.deliver !== "detail" && !dryRun && !table)
    throw new UsageError(
      `--from ${values.from}: each event is checked against its decision record before it goes; give --table (or DECISIONS_TABLE)`,
    );
  const filter = {
    ...(values.policy ? { policy: values.policy } : {}),
    ...(values.reason ? { reason: values.reason } : {}),
    ...(values["older-than"] ? { olderThanMs: parseDuration(values["older-than"], "older-than") } : {}),
    ...(values["newer-than"] ? { newerThanMs: parseDuration(values["newer-than"], "newer-than") } : {}),
  };
  return { kind: "replay", target, dryRun, table, filter, aws };
}

async function run(options: ReplayOptions): Promise<Replayed> {
  const aws = awsOptions(options.aws);
  if (options.kind === "redrive")
    return {
      kind: "redrive",
      handle: await redriveAll(sqsClient(aws), options.dlqArn, options.destinationArn),
    };
  const { target, dryRun, table } = options;
  const store = table ? decisionStore(table, aws) : undefined;
  const sendHome = sendHomeOf(target, aws, store);
  const report = await replayFiltered({
    deadLetters: queueAt(target.dlqUrl, aws),
    ...(sendHome ? { sendHome } : {}),
    dryRun,
    filter: options.filter,
    ...(store ? { failureOf: (id: string) => store.failureOf(id) } : {}),
  });
  return { kind: "replay", report, dryRun };
}

/**
 * What a dry run says about the letters it read: SQS has no way to look without receiving, so each
 * dry run raises the letters' receive counts (which this command therefore no longer prints:
 * before, a letter showed receives=1, then receives=5 after a few dry runs); nothing else moves.
 */
export const DRY_RUN_NOTE =
  "dry run: the letters stay as they were; SQS counts each read as a receive on the dead-letter queue, which nothing else reads";

/** A line per letter matched and per failure, then the counts; exit 1 when some could not go home. */
function print(replayed: Replayed): Printed {
  if (replayed.kind === "redrive")
    return { lines: [`redrive started: task ${replayed.handle}`], exitCode: 0 };
  const { report, dryRun } = replayed;
  const lines = report.matched.map(
    (letter) =>
      `${dryRun ? "would replay" : "replayed"} ${letter.kind} ${letter.itemId ?? "(no item)"} policy=${letter.policy ?? "-"} ` +
      `sent=${letter.sentAt}${letter.reason ? ` reason="${letter.reason}"` : ""}`,
  );
  for (const failure of report.failed)
    lines.push(`could not send ${failure.messageId} home: ${failure.error}`);
  lines.push(
    `${report.matched.length} matched, ${report.moved} moved, ${report.left} left in the dead-letter queue`,
  );
  // SQS counts every read as a receive: a dead letter's count measured these looks, not failures.
  if (dryRun && report.matched.length > 0) lines.push(DRY_RUN_NOTE);
  return { lines, exitCode: report.failed.length > 0 ? 1 : 0 };
}

/** `decide replay`: parse, run, print. */
export const replayCommand: OneShotCommand<ReplayOptions, Replayed> = { parse, run, print };
