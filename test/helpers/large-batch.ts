/**
 * The members of a large batch, made up on demand: the batch files test and benchmark fill a
 * store with them (a results line of about 210 bytes each, like a four-option policy's).
 */
import type { BatchMember } from "../../shared/domain/batch.ts";

/** The i-th member: most decided automatically, some escalated (a few labelled), some refused. */
export function largeMember(i: number): BatchMember {
  const itemId = `T-${String(i).padStart(7, "0")}`;
  if (i % 20 === 0)
    return {
      itemId,
      policyId: "ticket-routing",
      policyVersion: 1,
      state: "failed",
      problem: "state: too long",
    };
  const human = i % 7 === 0;
  const p = 0.5 + (i % 1000) / 2500;
  return {
    itemId,
    policyId: "ticket-routing",
    policyVersion: 1,
    state: human ? "human" : "auto",
    route: human ? "human" : "auto",
    chosen: "billing",
    distribution: { billing: p, technical: (1 - p) / 2, account: (1 - p) / 3, out_of_scope: (1 - p) / 6 },
    reason: human ? "below_threshold" : "confident",
    status: human ? "pending_review" : "auto_approved",
    ...(human && i % 3 === 0 ? { label: "technical" } : {}),
  };
}
