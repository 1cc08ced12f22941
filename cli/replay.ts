/**
 * `decide replay`: moves dead-letter messages back to the intake queue, all of them (SQS redrive)
 * or a filtered selection, with a dry run that lists what would move. Uses the AWS CLI's
 * conventions: --region and --profile (or AWS_REGION and AWS_PROFILE), and AWS_ENDPOINT_URL_SQS
 * for the local mode.
 */
import { parseArgs } from "node:util";
import { sqsClient } from "../shared/adapters/aws-clients.ts";
import { redriveAll } from "../shared/adapters/sqs-queue.ts";
import { replayFiltered } from "../shared/use-cases/replay.ts";
import { requiredFlag, settingFrom, UsageError } from "./args.ts";
import { awsOptions, decisionStore, queueAt } from "./aws.ts";

export const replayUsage = `decide replay --dlq-url URL --queue-url URL [--policy ID] [--reason TEXT] [--older-than 2h] [--newer-than 1d] [--dry-run]
decide replay --all --dlq-arn ARN [--queue-arn ARN]

Filtered: re-sends matching dead-letter messages to the queue and deletes them from the DLQ
(--dry-run lists them only); --dlq-url and --queue-url default to DLQ_URL and INTAKE_QUEUE_URL. --reason matches the failure noted by the decide function
(needs --table or DECISIONS_TABLE). --all starts SQS's own redrive (StartMessageMoveTask).
Common: --region, --profile (AWS CLI conventions).`;

/** Parses 90s, 30m, 2h, 1d into milliseconds. */
export function parseDuration(text: string, flag: string): number {
  const match = /^(\d+(?:\.\d+)?)(ms|s|m|h|d)$/.exec(text.trim());
  if (!match) throw new UsageError(`--${flag} must look like 90s, 30m, 2h or 1d, got "${text}"`);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[
    match[2] as "ms" | "s" | "m" | "h" | "d"
  ];
  return Number(match[1]) * unit;
}

/** Runs the command; returns the exit code. */
export async function replayCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
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
    },
    strict: true,
  });
  const aws = awsOptions(values);
  if (values.all) {
    const handle = await redriveAll(
      sqsClient(aws),
      requiredFlag("dlq-arn", values["dlq-arn"]),
      values["queue-arn"],
    );
    console.log(`redrive started: task ${handle}`);
    return 0;
  }
  const table = values.table ?? process.env.DECISIONS_TABLE;
  if (values.reason && !table)
    throw new UsageError("--reason needs --table (or DECISIONS_TABLE) to read noted failures");
  const store = table ? decisionStore(table, aws) : undefined;
  const report = await replayFiltered({
    deadLetters: queueAt(settingFrom("dlq-url", values["dlq-url"], "DLQ_URL"), aws),
    destination: queueAt(settingFrom("queue-url", values["queue-url"], "INTAKE_QUEUE_URL"), aws),
    dryRun: values["dry-run"] ?? false,
    filter: {
      ...(values.policy ? { policy: values.policy } : {}),
      ...(values.reason ? { reason: values.reason } : {}),
      ...(values["older-than"] ? { olderThanMs: parseDuration(values["older-than"], "older-than") } : {}),
      ...(values["newer-than"] ? { newerThanMs: parseDuration(values["newer-than"], "newer-than") } : {}),
    },
    ...(store ? { failureOf: (id: string) => store.failureOf(id) } : {}),
  });
  for (const letter of report.matched) {
    console.log(
      `${values["dry-run"] ? "would replay" : "replayed"} ${letter.itemId ?? "(unreadable)"} policy=${letter.policy ?? "-"} ` +
        `sent=${letter.sentAt} receives=${letter.receiveCount}${letter.reason ? ` reason="${letter.reason}"` : ""}`,
    );
  }
  console.log(
    `${report.matched.length} matched, ${report.moved} moved, ${report.skipped} left in the dead-letter queue`,
  );
  return 0;
}
