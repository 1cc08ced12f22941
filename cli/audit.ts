/**
 * `decide audit`: the live rate of wrong automatic actions of each policy, with its interval,
 * estimated from audit samples only (inverse-probability weighting by confidence band; see
 * docs/architecture.md, "Live error rate from audits"). Against a policy's `maxAutoError` the
 * verdict has three states, each with its evidence: within budget (exit 0), over budget (exit 3:
 * the interval's lower end is above the budget, as the daily Audit function's alarm reads it), and
 * not enough audit labels (exit 4, with how many more per band would settle it).
 */
import { parseArgs } from "node:util";
import type { PolicyAudit } from "../shared/domain/audit/policy-audit.ts";
import { FUNCTION_ENV } from "../shared/domain/function-env.ts";
import { PolicyRegistry } from "../shared/domain/policy/registry.ts";
import { AUDIT } from "../shared/domain/topology.ts";
import { auditLines, overBudget } from "../shared/reports/audit-text.ts";
import { estimateAutoErrors, windowStart } from "../shared/use-cases/audit-estimate.ts";
import { settingFrom, sinceFlag, UsageError } from "./args.ts";
import { AWS_FLAGS, awsOptions, decisionStore } from "./aws.ts";
import { type CommandEnv, jsonLines, type OneShotCommand } from "./command.ts";

export const auditUsage = `decide audit [--from-table T] [--policy ID] [--since YYYY-MM-DD] [--confidence 0.95]
             [--policies-dir events/policies] [--json] [--region R] [--profile P]

Estimates each policy's rate of wrong automatic actions (overall and per option chosen) from the
audit samples of decisions made since --since (default ${AUDIT.windowDays} days ago): otherwise automatic
decisions drawn for review at their confidence band's rate, each weighted by the inverse of its chance.
Labels on items escalated for other reasons are not a random sample and are left out.
Prints the estimate with its interval, the bands and what they rest on, and against the policy's
maxAutoError (else its certificate's target, on the current version's samples alone) one of three verdicts: within budget (the upper end, reading overdue unlabelled samples
and decisions no label speaks for as wrong, is within it: exit 0), OVER BUDGET (the lower end is above
it: exit 3), or NOT ENOUGH AUDIT LABELS (neither: exit 4, with how many more labels per band would
settle it). --from-table defaults to DECISIONS_TABLE (npm start exports it).
Example: npx decide audit --from-table "$DECISIONS_TABLE" --policy content-moderation --since 2026-11-01`;

/** Exit code when a policy is over its error budget (the interval's lower end is above it). */
const OVER_BUDGET_EXIT_CODE = 3;

/** Exit code when a policy's audit labels are too few to say whether it is within its budget. */
const NOT_ENOUGH_LABELS_EXIT_CODE = 4;

/** The exit code of the verdicts: over budget wins, then not enough labels, else 0. */
function exitCodeOf(audits: readonly PolicyAudit[]): number {
  if (audits.some(overBudget)) return OVER_BUDGET_EXIT_CODE;
  if (audits.some((a) => a.verdict?.state === "not_enough_labels")) return NOT_ENOUGH_LABELS_EXIT_CODE;
  return 0;
}

/** `--confidence` as a number in (0.5, 1). */
export function confidenceFlag(value: string | undefined, fallback: number): number {
  if (value === undefined) return fallback;
  const parsed = Number(value);
  if (!(parsed > 0.5 && parsed < 1))
    throw new UsageError(`--confidence must be above 0.5 and below 1, got "${value}"`);
  return parsed;
}

/** What `decide audit` was asked. */
interface AuditOptions {
  readonly table: string;
  readonly policyId: string | undefined;
  readonly since: string;
  readonly confidence: number;
  readonly policiesDir: string;
  readonly aws: { readonly region?: string | undefined; readonly profile?: string | undefined };
  readonly json: boolean;
}

/** The flags, and DECISIONS_TABLE when --from-table is left out. */
function parse(argv: string[], env: CommandEnv): AuditOptions {
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
  return {
    table: settingFrom("from-table", values["from-table"], FUNCTION_ENV.DECISIONS_TABLE, env),
    policyId: values.policy,
    since: sinceFlag(values.since, windowStart(new Date())),
    confidence: confidenceFlag(values.confidence, AUDIT.confidence),
    policiesDir: values["policies-dir"]!,
    aws: { region: values.region, profile: values.profile },
    json: values.json ?? false,
  };
}

/** Estimates each policy's rate (or the one asked for). */
async function run(options: AuditOptions): Promise<PolicyAudit[]> {
  const policies = await PolicyRegistry.fromFolder(options.policiesDir);
  if (options.policyId !== undefined && !policies.current(options.policyId))
    throw new UsageError(
      `--policy: unknown policy "${options.policyId}" (known: ${policies.ids().join(", ")})`,
    );
  return estimateAutoErrors(
    { store: decisionStore(options.table, awsOptions(options.aws)), policies },
    {
      since: options.since,
      now: new Date(),
      confidence: options.confidence,
      ...(options.policyId !== undefined ? { policyId: options.policyId } : {}),
    },
  );
}

/** `decide audit`: parse, run, print (exit 3 over budget, 4 not enough audit labels to say). */
export const auditCommand: OneShotCommand<AuditOptions, PolicyAudit[]> = {
  parse,
  run,
  print: (audits, options) => {
    const exitCode = exitCodeOf(audits);
    if (options.json) return jsonLines(audits, exitCode);
    return { lines: audits.flatMap((audit) => auditLines(audit)), exitCode };
  },
};
