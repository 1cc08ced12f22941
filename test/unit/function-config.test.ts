/** The Lambda functions' settings: defaults from the topology, typos refused with the variable named. */
import { describe, expect, it } from "vitest";
import { decideSettings, deliverySettings } from "../../functions/support/config.ts";
import { DECIDE_FUNCTION, DECIDE_QUEUES } from "../../shared/domain/topology.ts";

describe("decideSettings", () => {
  it("takes its defaults from the topology", () => {
    expect(decideSettings({ DECISION_ENDPOINT_NAME: "e" })).toEqual({
      endpointName: "e",
      endpointTimeoutMs: DECIDE_FUNCTION.endpointTimeoutMs,
      endpointAttempts: DECIDE_FUNCTION.endpointAttempts,
      publishLeaseMs: DECIDE_FUNCTION.publishLeaseMs,
      endpointBatchItems: DECIDE_FUNCTION.endpointBatchItems,
      endpointBatchWindowMs: DECIDE_FUNCTION.endpointBatchWindowMs,
      endpointBaseDelayMs: DECIDE_FUNCTION.endpointBaseDelayMs,
      endpointBatchBodyBytes: DECIDE_FUNCTION.endpointBatchBodyBytes,
    });
  });

  it("refuses a number that is not one, naming the variable", () => {
    expect(() => decideSettings({ DECISION_ENDPOINT_NAME: "e", ENDPOINT_TIMEOUT_MS: "30s" })).toThrow(
      'environment variable ENDPOINT_TIMEOUT_MS must be a positive integer, got "30s"',
    );
    expect(() => decideSettings({})).toThrow("environment variable DECISION_ENDPOINT_NAME is required");
  });
});

describe("deliverySettings", () => {
  it("takes the failure limits and the overload backoff from the topology, and refuses a typo by name", () => {
    expect(deliverySettings({})).toEqual({
      maxItemFailures: DECIDE_QUEUES.maxItemFailures,
      maxReceiveCount: DECIDE_QUEUES.maxReceiveCount,
      overloadBackoff: DECIDE_QUEUES.overloadBackoff,
    });
    expect(deliverySettings({ MAX_ITEM_FAILURES: "2" }).maxItemFailures).toBe(2);
    expect(() => deliverySettings({ OVERLOAD_BACKOFF_MAX_SECONDS: "15m" })).toThrow(
      'environment variable OVERLOAD_BACKOFF_MAX_SECONDS must be a positive integer, got "15m"',
    );
  });
});
