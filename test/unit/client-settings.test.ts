/**
 * The adapters carry no timeout or retry count of their own: their options are required, and
 * where they are composed (the decide function, the CLI's calibration and publishing) the values
 * are the topology's. Before, the endpoint clients defaulted to 30 s / 4 tries while the
 * topology said 25 s / 3, and `decide calibrate --endpoint-name` used the defaults.
 */
import { describe, expect, it } from "vitest";
import { publisherTo } from "../../cli/aws.ts";
import { openScoringSource } from "../../cli/calibrate/calibrate-scoring.ts";
import { dependenciesFromEnv } from "../../functions/decide.ts";
import { BatchingDecisionEndpoint } from "../../shared/adapters/batching-endpoint.ts";
import type { SageMakerDecisionEndpoint } from "../../shared/adapters/decision-endpoint.ts";
import { EventPublisher } from "../../shared/adapters/event-publisher.ts";
import type { HttpDecisionEndpoint } from "../../shared/adapters/http-decision-endpoint.ts";
import {
  CALIBRATION_ENDPOINT_CALLS,
  DECIDE_FUNCTION,
  ENDPOINT_BATCHING,
  ENDPOINT_CALLS,
  EVENT_PUBLISHING,
} from "../../shared/domain/topology.ts";

const env = {
  AWS_REGION: "us-east-1",
  DECISIONS_TABLE: "decisions",
  EVENT_BUS_NAME: "bus",
  DECISION_ENDPOINT_NAME: "decision-endpoint",
};

describe("adapter settings from the topology", () => {
  it("the topology's endpoint calls are the decide function's 50 s / 2 tries", () => {
    expect(ENDPOINT_CALLS).toEqual({ timeoutMs: 50_000, attempts: 2, baseDelayMs: 100 });
    expect(ENDPOINT_CALLS.timeoutMs).toBe(DECIDE_FUNCTION.endpointTimeoutMs);
  });

  it("the decide function composes its endpoint client and publisher with them", async () => {
    const deps = await dependenciesFromEnv(env);
    expect(deps.endpoint).toBeInstanceOf(BatchingDecisionEndpoint);
    expect((deps.endpoint as BatchingDecisionEndpoint).settings).toEqual({
      ...ENDPOINT_CALLS,
      ...ENDPOINT_BATCHING,
    });
    expect(deps.publisher).toBeInstanceOf(EventPublisher);
    expect((deps.publisher as EventPublisher).attempts).toBe(EVENT_PUBLISHING.attempts);
    const single = await dependenciesFromEnv({
      ...env,
      ENDPOINT_BATCH_ITEMS: "1",
      ENDPOINT_TIMEOUT_MS: "55000",
    });
    expect((single.endpoint as SageMakerDecisionEndpoint).settings).toEqual({
      ...ENDPOINT_CALLS,
      timeoutMs: 55_000,
    });
  });

  it("the CLI calibrates against an endpoint and publishes with them", async () => {
    const sagemaker = await openScoringSource({ "endpoint-name": "decision-endpoint", region: "us-east-1" });
    expect((sagemaker!.endpoint as SageMakerDecisionEndpoint).settings).toEqual(CALIBRATION_ENDPOINT_CALLS);
    expect(CALIBRATION_ENDPOINT_CALLS.timeoutMs).toBe(ENDPOINT_CALLS.timeoutMs);
    const http = await openScoringSource({ url: "http://127.0.0.1:1" });
    expect((http!.endpoint as HttpDecisionEndpoint).settings).toEqual(CALIBRATION_ENDPOINT_CALLS);
    const publisher = publisherTo("bus", { region: "us-east-1" }, { source: "upstream" });
    expect([publisher.attempts, publisher.baseDelayMs, publisher.source]).toEqual([
      EVENT_PUBLISHING.attempts,
      EVENT_PUBLISHING.baseDelayMs,
      "upstream",
    ]);
  });
});
