/**
 * `decide status`: where the items are. Records per state and policy (from the decisions table:
 * the decisions of the window, read a page at a time, so memory stays flat but the reads grow
 * with the window: narrow it with --since on a busy table), whether each policy's certificate
 * still holds for the model and prompt layout that decided its latest item, queue depths, and the
 * dead-letter queue by failure reason. Works against the local mode or AWS (AWS CLI conventions:
 * --region, --profile; AWS_ENDPOINT_URL_* for local).
 */
import { parseArgs } from "node:util";
import { certificateProblem } from "../shared/domain/calibration/provenance.ts";
import { type DecisionRecord, RECORD_STATUSES } from "../shared/domain/decision-record.ts";
import { allTime, type DecisionStore, everyDecision } from "../shared/domain/decision-store.ts";
import { PolicyRegistry } from "../shared/domain/policy/registry.ts";
import { replayFiltered } from "../shared/use-cases/replay.ts";
import { settingFrom, UsageError } from "./args.ts";
import { awsOptions, decisionStore, queueAt } from "./aws.ts";

/** The usage text of `decide status`. */
export const statusUsage = `decide status --table NAME [--since YYYY-MM-DD] [--policies-dir events/policies] [--queue-url URL] [--dlq-url URL] [--review-queue-url URL] [--batch-queue-url URL] [--region R] [--profile P] [--json]

Counts records per state and policy (decided since --since, else all; the policies come from --policies-dir or
POLICIES_DIR, rejected items of any policy included), queue depths, and the dead-letter queue by noted failure reason.
For each policy with a certificate (or one that requires it), says whether it still holds for the model
and prompt layout that decided the policy's latest item ("certificate stale: model changed").
The table, queue URLs and region come from flags or DECISIONS_TABLE, INTAKE_QUEUE_URL, DLQ_URL, REVIEW_QUEUE_URL,
BATCH_QUEUE_URL (the batch lane; \`decide batch list\` shows the batches themselves).`;

/** What the command reports. */
interface Status {
  readonly records: Record<string, Record<string, number>>;
  readonly certificates: Record<string, string>;
  readonly queues: Record<string, { visible: number; inFlight: number }>;
  readonly deadLetters: Record<string, number>;
}

/** Counts per policy and state, and each policy's latest decision (by when it was made). */
async function recordsOf(store: DecisionStore, filter: Parameters<typeof everyDecision>[1]) {
  const counts: Record<string, Record<string, number>> = {};
  const latest = new Map<string, DecisionRecord>();
  for await (const record of everyDecision(store, filter)) {
    counts[record.policyId] ??= {};
    counts[record.policyId]![record.status] = (counts[record.policyId]![record.status] ?? 0) + 1;
    const seen = latest.get(record.policyId);
    if (record.modelSha256 && (!seen || record.createdAt > seen.createdAt))
      latest.set(record.policyId, record);
  }
  return { counts, latest };
}

/** Whether each certified policy's certificate holds for what decided its latest item. */
function certificatesOf(
  registry: PolicyRegistry,
  latest: ReadonlyMap<string, DecisionRecord>,
): Record<string, string> {
  const out: Record<string, string> = {};
  for (const id of registry.ids()) {
    const policy = registry.current(id)!;
    if (!policy.certificate && !policy.requireCertificate) continue;
    const last = latest.get(id);
    const scoredBy =
      last?.modelSha256 && last.promptVersion
        ? { modelSha256: last.modelSha256, promptVersion: last.promptVersion }
        : undefined;
    const problem = certificateProblem(policy, scoredBy);
    const key = `${id}@${policy.version}`;
    if (problem)
      out[key] =
        `${problem}${policy.requireCertificate ? " (automation off: the policy requires a certificate)" : ""}`;
    else
      out[key] = scoredBy
        ? `certificate holds (${policy.certificate!.modelSha256!.slice(0, 12)}…, ${scoredBy.promptVersion})`
        : "certificate holds for the policy; no decision yet to check the model against";
  }
  return out;
}

/** Dead letters by the failure reason noted for them. */
async function deadLettersOf(
  store: DecisionStore,
  dlq: string | undefined,
  aws: ReturnType<typeof awsOptions>,
) {
  const reasons: Record<string, number> = {};
  if (!dlq) return reasons;
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
  return reasons;
}

function printStatus(status: Status): void {
  console.log("records by policy and state:");
  for (const [policy, byStatus] of Object.entries(status.records).sort()) {
    console.log(
      `  ${policy.padEnd(22)} ${RECORD_STATUSES.map((s) => `${s} ${byStatus[s] ?? 0}`).join(", ")}`,
    );
  }
  if (Object.keys(status.records).length === 0) console.log("  (none)");
  if (Object.keys(status.certificates).length > 0) {
    console.log("certificates:");
    for (const [policy, text] of Object.entries(status.certificates))
      console.log(`  ${policy.padEnd(22)} ${text}`);
  }
  console.log("queues:");
  for (const [name, depth] of Object.entries(status.queues))
    console.log(`  ${name.padEnd(12)} ${depth.visible} waiting, ${depth.inFlight} in flight`);
  console.log("dead letters by failure reason:");
  for (const [reason, n] of Object.entries(status.deadLetters)) console.log(`  ${reason}: ${n}`);
  if (Object.keys(status.deadLetters).length === 0) console.log("  (none)");
}

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
  const store = decisionStore(settingFrom("table", values.table, "DECISIONS_TABLE"), aws);
  const policies = await PolicyRegistry.fromFolder(
    values["policies-dir"] ?? process.env.POLICIES_DIR ?? "events/policies",
  );
  const window = allTime(new Date());
  if (values.since) {
    const since = Date.parse(values.since);
    if (Number.isNaN(since)) throw new UsageError(`--since: "${values.since}" is not a date (YYYY-MM-DD)`);
    window.since = new Date(since).toISOString();
  }
  const { counts, latest } = await recordsOf(store, { ...window, policyIds: policies.ids() });
  const queues: Record<string, string | undefined> = {
    intake: values["queue-url"] ?? process.env.INTAKE_QUEUE_URL,
    "dead-letter": values["dlq-url"] ?? process.env.DLQ_URL,
    review: values["review-queue-url"] ?? process.env.REVIEW_QUEUE_URL,
    batch: values["batch-queue-url"] ?? process.env.BATCH_QUEUE_URL,
  };
  const depths: Record<string, { visible: number; inFlight: number }> = {};
  for (const [name, url] of Object.entries(queues)) if (url) depths[name] = await queueAt(url, aws).depth();
  const status: Status = {
    records: counts,
    certificates: certificatesOf(policies, latest),
    queues: depths,
    deadLetters: await deadLettersOf(store, queues["dead-letter"], aws),
  };
  if (values.json) console.log(JSON.stringify(status, null, 2));
  else printStatus(status);
  return 0;
}
