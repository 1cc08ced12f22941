/** The Lambda functions' settings: defaults from the topology, typos refused with the variable named. */
import { describe, expect, it } from "vitest";
import { decideSettings } from "../../functions/config.ts";
import { DECIDE_FUNCTION } from "../../shared/domain/topology.ts";

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
