/**
 * `decide status`: where the items are. Records per state and policy (from the decisions table:
 * the decisions of the window, read a page at a time, so memory stays flat but the reads grow
 * with the window: narrow it with --since on a busy table), whether each policy's certificate
 * still holds for the model and prompt layout that decided its latest item, queue depths, and the
 * dead-letter queue by failure reason. A certificate is "verified" only once it was recomputed on
 * its labels in the table. Works against the local mode or AWS (AWS CLI conventions:
 * --region, --profile; AWS_ENDPOINT_URL_* for local).
 */
import { parseArgs } from "node:util";
import {
  requiredCertificateProblem,
  verifiedText,
} from "../shared/domain/calibration/certificate/registered-kind.ts";
import { certificateProblem, scoredByOf } from "../shared/domain/calibration/provenance.ts";
import { type DecisionRecord, RECORD_STATUSES } from "../shared/domain/decision-record.ts";
import { allTime, type DecisionStore, everyDecision } from "../shared/domain/decision-store.ts";
import { CLI_ENV, FUNCTION_ENV } from "../shared/domain/function-env.ts";
import { PolicyRegistry } from "../shared/domain/policy/registry.ts";
import { countHandling, type HandlingCounts, handlingText } from "../shared/domain/routing.ts";
import { verifyCertificate } from "../shared/use-cases/calibration/certificate-labels.ts";
import { replayFiltered } from "../shared/use-cases/replay.ts";
import { settingFrom, sinceFlag } from "./args.ts";
import { asyncObjectStore, awsOptions, decisionStore, queueAt } from "./aws.ts";
import { type CommandEnv, jsonLines, type OneShotCommand } from "./command.ts";

/** The usage text of `decide status`. */
export const statusUsage = `decide status --table NAME [--since YYYY-MM-DD] [--policies-dir events/policies] [--queue-url URL] [--dlq-url URL] [--review-queue-url URL] [--batch-queue-url URL] [--region R] [--profile P] [--json]

Counts records per state and policy (decided since --since, else all; the policies come from --policies-dir or
POLICIES_DIR, rejected items of any policy included), what each policy acted on (automated, and audit samples
apart: automatic decisions people label first; the rest escalated), queue depths, and the dead-letter queue by
noted failure reason.
For each policy with a certificate (or one that requires it), says whether it still holds for the model
and prompt layout that decided the policy's latest item ("certificate stale: model changed"), and
"certificate verified" only when recomputing it on the labels it names in the table gives it back
(else "certificate unverified" and why).
The table, queue URLs and region come from flags or DECISIONS_TABLE, INTAKE_QUEUE_URL, DLQ_URL, REVIEW_QUEUE_URL,
BATCH_QUEUE_URL (the batch lane; \`decide batch list\` shows the batches themselves). The async backlog is the
async lane's objects not yet settled (queued or running on the async endpoint), read from the table.`;

/** What the command reports. */
interface Status {
  readonly records: Record<string, Record<string, number>>;
  /**
   * Decided records per policy by handling: what the policy acted on (automated, and audit
   * samples), counted as the what-if, the calibration report and the decisions page count it.
   */
  readonly automation: Record<string, HandlingCounts>;
  readonly certificates: Record<string, string>;
  readonly queues: Record<string, { visible: number; inFlight: number }>;
  readonly deadLetters: Record<string, number>;
  /** The async lane's open objects (queued or running on the async endpoint, or being settled). */
  readonly asyncBacklog: { objects: number; items: number; oldestSubmittedAt: string | undefined };
}

/** Counts per policy and state and by handling, and each policy's latest decision (by when it was made). */
async function recordsOf(store: DecisionStore, filter: Parameters<typeof everyDecision>[1]) {
  const counts: Record<string, Record<string, number>> = {};
  const automation: Record<string, HandlingCounts> = {};
  const latest = new Map<string, DecisionRecord>();
  for await (const record of everyDecision(store, filter)) {
    counts[record.policyId] ??= {};
    automation[record.policyId] = countHandling([record], automation[record.policyId]);
    counts[record.policyId]![record.status] = (counts[record.policyId]![record.status] ?? 0) + 1;
    const seen = latest.get(record.policyId);
    if (record.modelSha256 && (!seen || record.createdAt > seen.createdAt))
      latest.set(record.policyId, record);
  }
  return { counts, automation, latest };
}

/**
 * Whether each certified policy's certificate holds for what decided its latest item, and whether
 * it is verified: recomputed on the labels it names in the table. Only then does it say
 * "certificate verified"; a certificate whose counts hold but whose labels were not found says
 * "certificate unverified" and why.
 */
async function certificatesOf(
  registry: PolicyRegistry,
  store: DecisionStore,
  latest: ReadonlyMap<string, DecisionRecord>,
): Promise<Record<string, string>> {
  const out: Record<string, string> = {};
  for (const id of registry.ids()) {
    const policy = registry.current(id)!;
    if (!policy.certificate && !policy.requireCertificate) continue;
    const last = latest.get(id);
    const scoredBy = last ? scoredByOf(last) : undefined;
    const problem = certificateProblem(policy, scoredBy);
    const verdict = problem ? undefined : await verifyCertificate({ store, policies: registry }, policy);
    const off = policy.requireCertificate ? " (automation off: the policy requires a certificate)" : "";
    const key = `${id}@${policy.version}`;
    if (problem) out[key] = `${problem}${off}`;
    else if (!verdict!.verified) out[key] = `${verdict!.reason}${off}`;
    else {
      const kind = requiredCertificateProblem(policy, policy.certificate);
      const verified = `${verifiedText(policy.certificate!, verdict!.labels, "the table")}${kind ? `; automation off: ${kind}` : ""}`;
      out[key] = scoredBy
        ? `${verified} (${policy.certificate!.modelSha256!.slice(0, 12)}…, ${scoredBy.promptVersion})`
        : `${verified}; no decision yet to check the model against`;
    }
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

/** Open objects read at most (a batch of a million items is about 2,600). */
const ASYNC_BACKLOG_CAP = 10_000;

/** The async lane's open objects, from their records in the table (none where the lane is not deployed). */
async function asyncBacklogOf(
  table: string,
  aws: ReturnType<typeof awsOptions>,
): Promise<Status["asyncBacklog"]> {
  const open = await asyncObjectStore(table, aws).open(ASYNC_BACKLOG_CAP);
  return {
    objects: open.length,
    items: open.reduce((sum, object) => sum + object.itemCount, 0),
    oldestSubmittedAt: open[0]?.submittedAt,
  };
}

/** The lines of `status`, as a person reads them. */
function statusLines(status: Status): string[] {
  const lines = ["records by policy and state:"];
  for (const [policy, byStatus] of Object.entries(status.records).sort()) {
    lines.push(`  ${policy.padEnd(22)} ${RECORD_STATUSES.map((s) => `${s} ${byStatus[s] ?? 0}`).join(", ")}`);
  }
  if (Object.keys(status.records).length === 0) lines.push("  (none)");
  const automation = Object.entries(status.automation).sort();
  if (automation.length > 0) {
    lines.push(
      "what each policy acted on (automated, and audit samples: automatic decisions people label first):",
    );
    for (const [policy, c] of automation) lines.push(`  ${policy.padEnd(22)} ${handlingText(c)}`);
  }
  if (Object.keys(status.certificates).length > 0) {
    lines.push("certificates:");
    for (const [policy, text] of Object.entries(status.certificates))
      lines.push(`  ${policy.padEnd(22)} ${text}`);
  }
  lines.push("queues:");
  for (const [name, depth] of Object.entries(status.queues))
    lines.push(`  ${name.padEnd(12)} ${depth.visible} waiting, ${depth.inFlight} in flight`);
  const backlog = status.asyncBacklog;
  lines.push(
    `async backlog: ${backlog.objects}${backlog.objects >= ASYNC_BACKLOG_CAP ? " or more" : ""} objects (${backlog.items} items) open on the async endpoint${backlog.oldestSubmittedAt ? `, oldest submitted ${backlog.oldestSubmittedAt}` : ""}`,
  );
  lines.push("dead letters by failure reason:");
  for (const [reason, n] of Object.entries(status.deadLetters)) lines.push(`  ${reason}: ${n}`);
  if (Object.keys(status.deadLetters).length === 0) lines.push("  (none)");
  return lines;
}

/** What `decide status` was asked: the table, the window, the policies and the queues to look at. */
interface StatusOptions {
  readonly table: string;
  readonly since: string | undefined;
  readonly policiesDir: string;
  /** Queue URLs by name (intake, dead-letter, review, batch); those not given are left out. */
  readonly queues: Readonly<Record<string, string | undefined>>;
  readonly aws: { readonly region?: string | undefined; readonly profile?: string | undefined };
  readonly json: boolean;
}

/** The flags, and the variables `npm start` exports for what they leave out. */
function parse(argv: string[], env: CommandEnv): StatusOptions {
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
  const table = settingFrom("table", values.table, FUNCTION_ENV.DECISIONS_TABLE, env);
  const since = values.since === undefined ? undefined : sinceFlag(values.since, "");
  return {
    table,
    since,
    policiesDir: values["policies-dir"] ?? env[FUNCTION_ENV.POLICIES_DIR] ?? "events/policies",
    queues: {
      intake: values["queue-url"] ?? env[FUNCTION_ENV.INTAKE_QUEUE_URL],
      "dead-letter": values["dlq-url"] ?? env[CLI_ENV.DLQ_URL],
      review: values["review-queue-url"] ?? env[CLI_ENV.REVIEW_QUEUE_URL],
      batch: values["batch-queue-url"] ?? env[FUNCTION_ENV.BATCH_QUEUE_URL],
    },
    aws: { region: values.region, profile: values.profile },
    json: values.json ?? false,
  };
}

/** Reads the records, certificates, queue depths and dead letters. */
async function run(options: StatusOptions): Promise<Status> {
  const aws = awsOptions(options.aws);
  const store = decisionStore(options.table, aws);
  const policies = await PolicyRegistry.fromFolder(options.policiesDir);
  const window = allTime(new Date());
  if (options.since) window.since = options.since;
  const { counts, automation, latest } = await recordsOf(store, { ...window, policyIds: policies.ids() });
  const depths: Record<string, { visible: number; inFlight: number }> = {};
  for (const [name, url] of Object.entries(options.queues))
    if (url) depths[name] = await queueAt(url, aws).depth();
  return {
    records: counts,
    automation,
    certificates: await certificatesOf(policies, store, latest),
    queues: depths,
    deadLetters: await deadLettersOf(store, options.queues["dead-letter"], aws),
    asyncBacklog: await asyncBacklogOf(options.table, aws),
  };
}

/** `decide status`: parse, run, print. */
export const statusCommand: OneShotCommand<StatusOptions, Status> = {
  parse,
  run,
  print: (status, options) =>
    options.json ? jsonLines(status) : { lines: statusLines(status), exitCode: 0 },
};
