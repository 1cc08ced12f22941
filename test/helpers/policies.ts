/** Small policies for tests of the decide path without servers. */
import { type Policy, parsePolicy } from "../../shared/domain/policy/policy.ts";

/** A two-team routing policy, version 1: both options automatable, threshold 0.8. */
export const TEAMS_POLICY: Policy = parsePolicy({
  id: "tickets",
  version: 1,
  question: "Which team?",
  type: "choice",
  options: [
    { id: "billing", description: "Billing", automate: true },
    { id: "technical", description: "Technical", automate: true },
  ],
  autoThreshold: 0.8,
});

/** Four automatable options a, b, c, d, threshold 0.8: calibration tests on generated logits. */
export const FOUR_OPTIONS_POLICY: Policy = parsePolicy({
  id: "p",
  version: 1,
  question: "Which?",
  type: "choice",
  options: ["a", "b", "c", "d"].map((id) => ({ id, description: id, automate: true })),
  autoThreshold: 0.8,
});

/**
 * Four teams (legal never automated, none out of scope) asked of a small model, then a large one:
 * the cascade tests' policy, its thresholds and audit settings given by each test.
 */
export function cascadeTicketsPolicy(fields: {
  readonly autoThreshold: number;
  readonly cascade: readonly { model: string; autoThreshold: number; temperature?: number }[];
  readonly requireCertificate?: boolean;
  readonly auditSampleRate?: number;
}): Policy {
  return parsePolicy({
    id: "tickets",
    version: 1,
    question: "Which team?",
    type: "choice",
    options: [
      { id: "billing", description: "Billing", automate: true },
      { id: "technical", description: "Technical", automate: true },
      { id: "legal", description: "Legal", automate: false },
      { id: "none", description: "None of these", automate: false },
    ],
    outOfScopeOption: "none",
    model: "small",
    ...fields,
  });
}
