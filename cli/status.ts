/**
 * `decide status`: where the items are. Records per state and policy (from the decisions table:
 * the decisions of the window, read a page at a time, so memory stays flat but the reads grow
 * with the window: narrow it with --since on a busy table), queue depths, and the dead-letter
 * queue by failure reason. Works against the local mode or AWS (AWS CLI conventions: --region,
 * --profile; AWS_ENDPOINT_URL_* for local).
 */
import { parseArgs } from "node:util";
import { RECORD_STATUSES } from "../shared/domain/decision-record.ts";
import { allTime, everyDecision } from "../shared/domain/decision-store.ts";
import { PolicyRegistry } from "../shared/domain/policy/registry.ts";
import { replayFiltered } from "../shared/use-cases/replay.ts";
import { requiredFlag, UsageError } from "./args.ts";
import { awsOptions, decisionStore, queueAt } from "./aws.ts";

export const statusUsage = `decide status --table NAME [--since YYYY-MM-DD] [--policies-dir events/policies] [--queue-url URL] [--dlq-url URL] [--review-queue-url URL] [--batch-queue-url URL] [--region R] [--profile P] [--json]

Counts records per state and policy (decided since --since, else all; the policies come from --policies-dir or
POLICIES_DIR, rejected items of any policy included), queue depths, and the dead-letter queue by noted failure reason.
The table, queue URLs and region come from flags or DECISIONS_TABLE, INTAKE_QUEUE_URL, DLQ_URL, REVIEW_QUEUE_URL,
BATCH_QUEUE_URL (the batch lane; \`decide batch list\` shows the batches themselves).`;

/** Runs the command; returns the exit code. */
export async function statusCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      table: { type: "string" },
      since: { type: "string" },
      "policies-dir": { type: "string" },
      "queue-url": { type: "string" },
      "dlq-url": { type: "string" },
      "review-queue-url": { type: "string" },
      "batch-queue-url": { type: "string" },
      region: { type: "string" },
      profile: { type: "string" },
      json: { type: "boolean", default: false },
    },
    strict: true,
  });
  const aws = awsOptions(values);
  const table = requiredFlag("table", values.table ?? process.env.DECISIONS_TABLE);
  const store = decisionStore(table, aws);

  const policies = await PolicyRegistry.fromFolder(
    values["policies-dir"] ?? process.env.POLICIES_DIR ?? "events/policies",
  );
  const window = allTime(new Date());
  if (values.since) {
    const since = Date.parse(values.since);
    if (Number.isNaN(since)) throw new UsageError(`--since: "${values.since}" is not a date (YYYY-MM-DD)`);
    window.since = new Date(since).toISOString();
  }
  const counts: Record<string, Record<string, number>> = {};
  for await (const record of everyDecision(store, { ...window, policyIds: policies.ids() })) {
    counts[record.policyId] ??= {};
    counts[record.policyId]![record.status] = (counts[record.policyId]![record.status] ?? 0) + 1;
  }
  const queues: Record<string, string | undefined> = {
    intake: values["queue-url"] ?? process.env.INTAKE_QUEUE_URL,
    "dead-letter": values["dlq-url"] ?? process.env.DLQ_URL,
    review: values["review-queue-url"] ?? process.env.REVIEW_QUEUE_URL,
    batch: values["batch-queue-url"] ?? process.env.BATCH_QUEUE_URL,
  };
  const depths: Record<string, { visible: number; inFlight: number }> = {};
  for (const [name, url] of Object.entries(queues)) {
    if (!url) continue;
    depths[name] = await queueAt(url, aws).depth();
  }
  const reasons: Record<string, number> = {};
  const dlq = queues["dead-letter"];
  if (dlq) {
    const report = await replayFiltered({
      deadLetters: queueAt(dlq, aws),
      filter: {},
      dryRun: true,
      failureOf: (id) => store.failureOf(id),
    });
    for (const letter of report.matched) {
      const reason = (letter.reason ?? "no failure noted").split(":")[0]!;
      reasons[reason] = (reasons[reason] ?? 0) + 1;
    }
  }
  if (values.json) {
    console.log(JSON.stringify({ records: counts, queues: depths, deadLetters: reasons }, null, 2));
    return 0;
  }
  console.log("records by policy and state:");
  for (const [policy, byStatus] of Object.entries(counts).sort()) {
    console.log(
      `  ${policy.padEnd(22)} ${RECORD_STATUSES.map((s) => `${s} ${byStatus[s] ?? 0}`).join(", ")}`,
    );
  }
  if (Object.keys(counts).length === 0) console.log("  (none)");
  console.log("queues:");
  for (const [name, depth] of Object.entries(depths))
    console.log(`  ${name.padEnd(12)} ${depth.visible} waiting, ${depth.inFlight} in flight`);
  console.log("dead letters by failure reason:");
  for (const [reason, n] of Object.entries(reasons)) console.log(`  ${reason}: ${n}`);
  if (Object.keys(reasons).length === 0) console.log("  (none)");
  return 0;
}
