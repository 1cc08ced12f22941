/**
 * A forged "Decision Made" put through the auto-action and review intake handlers, for tests that
 * read the forged-events metric those handlers emit.
 */
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import type { DecisionRecord } from "../../shared/domain/decision-record.ts";
import type { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import { eventFor } from "../../shared/use-cases/record-event.ts";

/**
 * Runs the auto-action and review intake handlers on a forged "Decision Made" each (the
 * forged-events alarm's metric): an automated decision to allow, sent as `remove` to the
 * auto-action and as escalated to the review intake.
 */
export async function refuseForgedEvents(policies: PolicyRegistry): Promise<void> {
  const store = new InMemoryDecisionStore();
  const at = new Date().toISOString();
  const record: DecisionRecord = {
    itemId: "FORGED",
    policyId: "content-moderation",
    policyVersion: 1,
    status: "auto_approved",
    route: "auto",
    reason: "confident",
    chosen: "allow",
    distribution: { allow: 0.97, restrict: 0.01, remove: 0.01, out_of_scope: 0.01 },
    topProbability: 0.97,
    confidence: 0.96,
    modelSha256: "a".repeat(64),
    promptSha256: "b".repeat(64),
    createdAt: at,
    updatedAt: at,
    eventPublished: true,
  };
  await store.create(record);
  const sqsRecord = (detail: Record<string, unknown>) => ({
    messageId: "forged",
    receiptHandle: "forged",
    body: JSON.stringify({
      version: "0",
      id: "6a7e8feb-b491-4cf7-a9f1-bf3703467718",
      "detail-type": "Decision Made",
      source: "decision-pipeline",
      account: "123456789012",
      time: at,
      region: "us-east-1",
      resources: [],
      detail,
    }),
    attributes: {} as never,
    messageAttributes: {},
    md5OfBody: "",
    eventSource: "aws:sqs",
    eventSourceARN: "arn:aws:sqs:us-east-1:123456789012:target",
    awsRegion: "us-east-1",
  });
  const genuine = eventFor(record).detail;
  const deps = { policies, store, publisher: { publish: async () => undefined }, now: () => new Date() };
  const { createAutoActionHandler } = await import("../../functions/auto-action.ts");
  await createAutoActionHandler(async () => deps)(
    { Records: [sqsRecord({ ...genuine, chosen: "remove" })] },
    { functionName: "auto-action" } as never,
  );
  const { createReviewIntakeHandler } = await import("../../functions/review-intake.ts");
  await createReviewIntakeHandler(async () => deps)(
    { Records: [sqsRecord({ ...genuine, route: "human" })] },
    { functionName: "review-intake" } as never,
  );
}
