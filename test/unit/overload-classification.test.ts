/**
 * An overloaded endpoint is no failure of the item: SageMaker throttling, a model not ready, the
 * container's 503 `queue_full` / `model_loading` and 504 `deadline_exceeded` (wrapped by SageMaker
 * as a ModelError, or passed on as a 503 by the local runtime) become an EndpointOverloadedError
 * with its reason, never tried again by the client nor split into more calls; failures of the
 * endpoint stay unavailable (retried) and 4xx stay rejected. The SDK client is replaced by one
 * that throws the SDK's own exception classes, since a real endpoint cannot be overloaded on cue
 * here (the local overload test overloads the real one).
 */
import {
  ModelError,
  ModelNotReadyException,
  type SageMakerRuntimeClient,
  SageMakerRuntimeServiceException,
  ServiceUnavailable,
  ValidationError,
} from "@aws-sdk/client-sagemaker-runtime";
import { describe, expect, it } from "vitest";
import { BatchingDecisionEndpoint } from "../../shared/adapters/batching-endpoint.ts";
import { SageMakerDecisionEndpoint } from "../../shared/adapters/decision-endpoint.ts";
import { classify } from "../../shared/adapters/endpoint-errors.ts";
import { systemOneRequest } from "../../shared/domain/contracts/system-one/index.ts";
import {
  EndpointOverloadedError,
  EndpointRejectedError,
  EndpointUnavailableError,
} from "../../shared/domain/errors.ts";
import { ENDPOINT_BATCHING, ENDPOINT_CALLS } from "../../shared/domain/topology.ts";
import { TEAMS_POLICY } from "../helpers/policies.ts";
import { answerFor } from "../helpers/system-one-answers.ts";

const $metadata = (httpStatusCode: number) => ({ $metadata: { httpStatusCode } });
const containerBody = (code: string) =>
  JSON.stringify({ error: { type: "overloaded_error", code, message: "busy" } });
const modelError = (status: number, body: string) =>
  new ModelError({
    ...$metadata(424),
    message: "wrapped",
    OriginalStatusCode: status,
    OriginalMessage: body,
  });

describe("classify", () => {
  const overloaded: [string, unknown, string][] = [
    [
      "SageMaker throttling",
      new SageMakerRuntimeServiceException({
        name: "ThrottlingException",
        $fault: "client",
        ...$metadata(429),
      }),
      "throttled",
    ],
    [
      "a serverless instance still starting",
      new ModelNotReadyException({ ...$metadata(429), message: "x" }),
      "model_not_ready",
    ],
    [
      "SageMaker's own 503",
      new ServiceUnavailable({ ...$metadata(503), message: "unavailable" }),
      "unavailable",
    ],
    [
      "the local runtime's 503 with the container's code",
      new ServiceUnavailable({ ...$metadata(503), message: containerBody("queue_full") }),
      "queue_full",
    ],
    ["a container 503 queue_full", modelError(503, containerBody("queue_full")), "queue_full"],
    ["a container 503 model_loading", modelError(503, containerBody("model_loading")), "model_not_ready"],
    [
      "a container 504 deadline_exceeded",
      modelError(504, containerBody("deadline_exceeded")),
      "deadline_exceeded",
    ],
    ["a container 429", modelError(429, "slow down"), "throttled"],
  ];
  it.each(overloaded)("calls %s overload, with its reason", (_what, error, reason) => {
    const classified = classify(error, "e");
    expect(classified).toBeInstanceOf(EndpointOverloadedError);
    expect((classified as EndpointOverloadedError).reason).toBe(reason);
    expect(classified.transient).toBe(true);
  });

  const others: [string, unknown, typeof EndpointUnavailableError | typeof EndpointRejectedError][] = [
    ["a container crash (500)", modelError(500, "crash"), EndpointUnavailableError],
    ["a 504 that is not the container's deadline", modelError(504, "late"), EndpointUnavailableError],
    [
      "the client's own timeout",
      Object.assign(new Error("aborted"), { name: "TimeoutError" }),
      EndpointUnavailableError,
    ],
    ["a 4xx from the model", modelError(422, containerBody("invalid_value")), EndpointRejectedError],
    [
      "SageMaker refusing the request",
      new ValidationError({ ...$metadata(400), message: "too big" }),
      EndpointRejectedError,
    ],
  ];
  it.each(others)("keeps %s what it was", (_what, error, kind) => {
    expect(classify(error, "e")).toBeInstanceOf(kind);
  });
});

const item = { id: "T-1", policy: "tickets", state: "charged twice" };
const answer = () => answerFor(systemOneRequest(item, TEAMS_POLICY), [2, 0]);

/** A client whose every call runs `respond` (with the call number), counting the calls. */
function client(respond: (call: number) => unknown): { client: SageMakerRuntimeClient; calls: () => number } {
  let calls = 0;
  const fake = {
    send: async () => {
      const result = respond(++calls);
      if (result instanceof Error) throw result;
      return { Body: new TextEncoder().encode(JSON.stringify(result)) };
    },
  } as unknown as SageMakerRuntimeClient;
  return { client: fake, calls: () => calls };
}

describe("the endpoint clients under overload", () => {
  it("does not spend the item's tries on an overloaded endpoint, but does on a failing one", async () => {
    const busy = client(() => modelError(503, containerBody("queue_full")));
    const single = new SageMakerDecisionEndpoint(busy.client, "e", {
      ...ENDPOINT_CALLS,
      attempts: 3,
      baseDelayMs: 1,
    });
    await expect(single.decide(item, TEAMS_POLICY)).rejects.toBeInstanceOf(EndpointOverloadedError);
    expect(busy.calls()).toBe(1);
    const failing = client(() => modelError(500, "crash"));
    const again = new SageMakerDecisionEndpoint(failing.client, "e", {
      ...ENDPOINT_CALLS,
      attempts: 3,
      baseDelayMs: 1,
    });
    await expect(again.decide(item, TEAMS_POLICY)).rejects.toBeInstanceOf(EndpointUnavailableError);
    expect(failing.calls()).toBe(3);
  });

  it("fails a throttled batched call's items as overloaded, without splitting it into one call per item", async () => {
    const throttled = client(
      () =>
        new SageMakerRuntimeServiceException({
          name: "ThrottlingException",
          $fault: "client",
          ...$metadata(429),
        }),
    );
    const endpoint = new BatchingDecisionEndpoint(throttled.client, "e", {
      ...ENDPOINT_CALLS,
      ...ENDPOINT_BATCHING,
      attempts: 3,
      baseDelayMs: 1,
      windowMs: 5,
    });
    const results = await Promise.allSettled(
      ["A", "B", "C"].map((id) => endpoint.decide({ ...item, id }, TEAMS_POLICY)),
    );
    for (const result of results)
      expect((result as PromiseRejectedResult).reason).toBeInstanceOf(EndpointOverloadedError);
    expect(throttled.calls()).toBe(1);
  });

  it("fails only the item the endpoint had no room for, and decides the others of its call", async () => {
    const partly = client(() => ({
      results: [
        { status: 200, body: answer() },
        { status: 503, body: JSON.parse(containerBody("queue_full")) },
        { status: 504, body: JSON.parse(containerBody("deadline_exceeded")) },
      ],
    }));
    const endpoint = new BatchingDecisionEndpoint(partly.client, "e", {
      ...ENDPOINT_CALLS,
      ...ENDPOINT_BATCHING,
      attempts: 3,
      baseDelayMs: 1,
      windowMs: 5,
    });
    const [first, second, third] = await Promise.allSettled(
      ["A", "B", "C"].map((id) => endpoint.decide({ ...item, id }, TEAMS_POLICY)),
    );
    expect(first!.status).toBe("fulfilled");
    expect((second as PromiseRejectedResult).reason).toMatchObject({
      name: "EndpointOverloadedError",
      reason: "queue_full",
    });
    expect((third as PromiseRejectedResult).reason).toMatchObject({ reason: "deadline_exceeded" });
    expect(partly.calls()).toBe(1);
  });
});
