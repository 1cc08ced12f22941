/**
 * `decide audit`: the live rate of wrong automatic actions of each policy, with its interval,
 * estimated from audit samples only (inverse-probability weighting by confidence band; see
 * docs/architecture.md, "Live error rate from audits"). Exits 3 when a policy's upper bound passes
 * its `maxAutoError`, as the daily Audit function's alarm would.
 */
import { parseArgs } from "node:util";
import { auditLines, overBudget } from "../shared/domain/audit/audit-text.ts";
import { PolicyRegistry } from "../shared/domain/policy/registry.ts";
import { AUDIT } from "../shared/domain/topology.ts";
import { estimateAutoErrors, windowStart } from "../shared/use-cases/audit-estimate.ts";
import { requiredFlag, UsageError } from "./args.ts";
import { AWS_FLAGS, awsOptions, decisionStore } from "./aws.ts";

export const auditUsage = `decide audit --from-table DECISIONS_TABLE [--policy ID] [--since YYYY-MM-DD] [--confidence 0.95]
             [--policies-dir events/policies] [--json] [--region R] [--profile P]

Estimates each policy's rate of wrong automatic actions (overall and per option chosen) from the
audit samples of decisions made since --since (default ${AUDIT.windowDays} days ago): otherwise automatic
decisions drawn for review at their confidence band's rate, each weighted by the inverse of its chance.
Labels on items escalated for other reasons are not a random sample and are left out.
Prints the estimate with its interval, the bands and what they rest on; exits 3 when an upper bound
passes the policy's maxAutoError.
Example: npx decide audit --from-table "$DECISIONS_TABLE" --policy content-moderation --since 2026-11-01`;

/** Exit code when a policy's upper bound passes its error budget. */
export const OVER_BUDGET_EXIT_CODE = 3;

/** `--since` as an ISO time: a date (YYYY-MM-DD) or an ISO date-time; `fallback` when absent. */
export function sinceFlag(value: string | undefined, fallback: string): string {
  if (value === undefined) return fallback;
  const time = /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2})?)?$/.test(value)
    ? Date.parse(value)
    : Number.NaN;
  if (Number.isNaN(time))
    throw new UsageError(`--since must be a date (YYYY-MM-DD) or an ISO time, got "${value}"`);
  return new Date(time).toISOString();
}

/** `--confidence` as a number in (0.5, 1). */
export function confidenceFlag(value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!(parsed > 0.5 && parsed < 1))
    throw new UsageError(`--confidence must be above 0.5 and below 1, got "${value}"`);
  return parsed;
}

/** Runs the command; returns the exit code. */
export async function auditCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      ...AWS_FLAGS,
      "from-table": { type: "string" },
      policy: { type: "string" },
      since: { type: "string" },
      confidence: { type: "string" },
      "policies-dir": { type: "string", default: "events/policies" },
      json: { type: "boolean", default: false },
    },
    strict: true,
  });
  const table = requiredFlag("from-table", values["from-table"] ?? process.env.DECISIONS_TABLE);
  const policies = await PolicyRegistry.fromFolder(values["policies-dir"]!);
  if (values.policy !== undefined && !policies.current(values.policy))
    throw new UsageError(`--policy: unknown policy "${values.policy}" (known: ${policies.ids().join(", ")})`);
  const audits = await estimateAutoErrors(
    { store: decisionStore(table, awsOptions(values)), policies },
    {
      since: sinceFlag(values.since, windowStart(new Date())),
      confidence: confidenceFlag(values.confidence, AUDIT.confidence),
      ...(values.policy !== undefined ? { policyId: values.policy } : {}),
    },
  );
  if (values.json) console.log(JSON.stringify(audits, null, 2));
  else for (const audit of audits) console.log(auditLines(audit).join("\n"));
  return audits.some(overBudget) ? OVER_BUDGET_EXIT_CODE : 0;
}
