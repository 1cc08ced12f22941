/**
 * The decide function's endpoint client reads answers through the System One contract: an answer
 * that breaks it (strings or nulls for logits, a missing or extra option, missing hashes) is an
 * endpoint failure, retried and then thrown, never a decision. The SDK client is replaced by one
 * that returns crafted bodies, since the real endpoint never sends them (the fault suite sends
 * them through the real SDK path too).
 */
import type { SageMakerRuntimeClient } from "@aws-sdk/client-sagemaker-runtime";
import { describe, expect, it } from "vitest";
import { SageMakerDecisionEndpoint } from "../../shared/adapters/decision-endpoint.ts";
import { systemOneRequest } from "../../shared/domain/contracts/system-one/index.ts";
import { EndpointUnavailableError } from "../../shared/domain/errors.ts";
import { ENDPOINT_CALLS } from "../../shared/domain/topology.ts";
import { TEAMS_POLICY } from "../helpers/policies.ts";
import { answerFor } from "../helpers/system-one-answers.ts";

const policy = TEAMS_POLICY;
/** A response body as loose JSON, to break on purpose. */
type Body = Record<string, Record<string, Record<string, Record<string, unknown>>>>;
const item = { id: "T-1", policy: "tickets", state: "charged twice" };
const valid = () => answerFor(systemOneRequest(item, policy), [2, 0]) as unknown as Body;

/** A client that answers every call with `body` and counts the calls. */
function clientAnswering(body: unknown): { client: SageMakerRuntimeClient; calls: () => number } {
  let calls = 0;
  const client = {
    send: async () => {
      calls++;
      return { Body: new TextEncoder().encode(typeof body === "string" ? body : JSON.stringify(body)) };
    },
  } as unknown as SageMakerRuntimeClient;
  return { client, calls: () => calls };
}

function detailOf(body: Body): Record<string, unknown> {
  return body.answers!.decision!.x_detail as Record<string, unknown>;
}

describe("SageMakerDecisionEndpoint", () => {
  it("asks the endpoint to serve a batch item after live traffic, and a live item as live", async () => {
    const inputs: { CustomAttributes?: string }[] = [];
    const client = {
      send: async (command: { input: { CustomAttributes?: string } }) => {
        inputs.push(command.input);
        return { Body: new TextEncoder().encode(JSON.stringify(valid())) };
      },
    } as unknown as SageMakerRuntimeClient;
    const endpoint = new SageMakerDecisionEndpoint(client, "e", { ...ENDPOINT_CALLS, attempts: 1 });
    await endpoint.decide({ ...item, batchId: "b-test-000001" }, policy);
    await endpoint.decide(item, policy);
    expect(inputs.map((i) => i.CustomAttributes)).toEqual(["priority=batch", undefined]);
  });

  it("reads logits by option id from a valid answer", async () => {
    const { client } = clientAnswering(valid());
    const decision = await new SageMakerDecisionEndpoint(client, "e", {
      ...ENDPOINT_CALLS,
      attempts: 1,
    }).decide(item, policy);
    expect(decision.logits).toEqual([2, 0]);
    expect(decision.modelSha256).toMatch(/^[0-9a-f]{64}$/);
  });

  it("reads logits by id even when the answer lists options in another order", async () => {
    const body = valid();
    const detail = detailOf(body);
    detail.logits = { technical: 0, billing: 2 };
    const { client } = clientAnswering(body);
    expect(
      (
        await new SageMakerDecisionEndpoint(client, "e", { ...ENDPOINT_CALLS, attempts: 1 }).decide(
          item,
          policy,
        )
      ).logits,
    ).toEqual([2, 0]);
  });

  const broken: [string, (body: Body) => unknown, RegExp][] = [
    [
      "string logits",
      (b) => Object.assign(detailOf(b), { logits: { billing: "9", technical: "0" } }),
      /logits/,
    ],
    ["null logits", (b) => Object.assign(detailOf(b), { logits: null }), /logits/],
    ["a missing option", (b) => Object.assign(detailOf(b), { logits: { billing: 1 } }), /missing technical/],
    [
      "an extra option",
      (b) => Object.assign(detailOf(b), { logits: { billing: 1, technical: 0, account: 0 } }),
      /extra account/,
    ],
    ["no prompt hash", (b) => delete detailOf(b).prompt_sha256, /prompt_sha256/],
    ["no model hash", (b) => delete b.x_detail!.model_sha256, /model_sha256/],
    ["no x_detail", (b) => delete b.answers!.decision!.x_detail, /x_detail/],
    [
      "a probability above 1",
      (b) => Object.assign(detailOf(b), { allowed_token_mass: 1.5 }),
      /allowed_token_mass/,
    ],
  ];
  it.each(broken)(
    "never turns an answer with %s into a decision: retried, then thrown",
    async (_what, breakIt, message) => {
      const body = valid();
      breakIt(body);
      const { client, calls } = clientAnswering(body);
      const error = await new SageMakerDecisionEndpoint(client, "e", {
        ...ENDPOINT_CALLS,
        attempts: 2,
        baseDelayMs: 1,
      })
        .decide(item, policy)
        .catch((e: unknown) => e);
      expect(error).toBeInstanceOf(EndpointUnavailableError);
      expect(String((error as Error).message)).toMatch(/malformed answer/);
      expect(String((error as Error).message)).toMatch(message);
      expect(calls()).toBe(2);
    },
  );

  it("treats a body that is not JSON as an endpoint failure", async () => {
    const { client } = clientAnswering("<html>gateway</html>");
    await expect(
      new SageMakerDecisionEndpoint(client, "e", { ...ENDPOINT_CALLS, attempts: 1 }).decide(item, policy),
    ).rejects.toThrow(/malformed answer: not JSON/);
  });
});
