/**
 * The endpoint prober (issue 42, item 3) on fakes of its ports: it sends nothing outside a bake,
 * sends its known items one after another while the new fleet bakes, counts a busy answer as a
 * reply (the fleet was reached) but not a timeout or a broken answer, and the handler publishes
 * the three counts the silent rollback alarm and the dashboards read, with a bundled policy.
 */
import { describe, expect, it } from "vitest";
import { createProbeEndpointHandler, proberFromEnv } from "../../functions/probe-endpoint.ts";
import type { DecidesItems, EndpointDecision } from "../../shared/domain/decision-endpoint.ts";
import { EndpointOverloadedError, EndpointUnavailableError } from "../../shared/domain/errors.ts";
import type { Item } from "../../shared/domain/item.ts";
import { ENDPOINT_PROBER } from "../../shared/domain/topology/prober.ts";
import { type ProbeEndpointDependencies, probeEndpoint } from "../../shared/use-cases/probe-endpoint.ts";
import { TEAMS_POLICY } from "../helpers/policies.ts";

const decision: EndpointDecision = { probabilities: [0.9, 0.05, 0.05], latencyMs: 12 } as never;

function fakes(baking: boolean, outcomes: ("answer" | "busy" | "timeout")[]) {
  const sent: Item[] = [];
  const endpoint: DecidesItems = {
    decide: async (item) => {
      const outcome = outcomes[sent.length];
      sent.push(item);
      if (outcome === "busy") throw new EndpointOverloadedError("queue_full", "queue_full");
      if (outcome === "timeout") throw new EndpointUnavailableError("timed out after 10000 ms");
      return decision;
    },
  };
  const deps: ProbeEndpointDependencies = {
    fleet: { counts: async () => ({ inService: 2, desired: 2, baking }) },
    endpoint,
    policy: TEAMS_POLICY,
    calls: outcomes.length,
    itemIdPrefix: "probe-",
  };
  return { deps, sent };
}

describe("the endpoint prober", () => {
  it("sends nothing while no new fleet bakes", async () => {
    const { deps, sent } = fakes(false, ["answer", "answer"]);
    expect(await probeEndpoint(deps)).toEqual({
      baking: false,
      calls: 0,
      replies: 0,
      answers: 0,
      failures: [],
    });
    expect(sent).toEqual([]);
  });

  it("sends its known items in turn while the new fleet bakes, and counts busy answers as replies", async () => {
    const { deps, sent } = fakes(true, ["answer", "busy", "timeout", "answer"]);
    const run = await probeEndpoint(deps);
    expect(run).toMatchObject({ baking: true, calls: 4, replies: 3, answers: 2 });
    expect(run.failures).toEqual(["timed out after 10000 ms"]);
    expect(sent.map((item) => item.id)).toEqual(["probe-1", "probe-2", "probe-3", "probe-4"]);
    expect(new Set(sent.map((item) => JSON.stringify(item.state))).size).toBe(1);
    expect(sent.every((item) => item.policy === TEAMS_POLICY.id)).toBe(true);
  });

  it("publishes its calls, replies and answers", async () => {
    const { deps } = fakes(true, ["answer", "timeout"]);
    const published: Record<string, number> = {};
    const metrics = {
      addMetric: (name: string, _unit: string, value: number) => {
        published[name] = value;
      },
      publishStoredMetrics: () => undefined,
      setThrowOnEmptyMetrics: () => undefined,
      captureColdStartMetric: () => undefined,
    };
    const handler = createProbeEndpointHandler(
      async () => deps,
      metrics as unknown as Parameters<typeof createProbeEndpointHandler>[1],
    );
    await handler({}, {} as never);
    const names = ENDPOINT_PROBER.metrics;
    expect(published).toEqual({ [names.calls]: 2, [names.replies]: 1, [names.answers]: 1 });
  });

  it("sends its items under a bundled policy, the one PROBE_POLICY names or the first", async () => {
    const env = { PROBED_ENDPOINT_NAME: "e", AWS_REGION: "eu-west-1" };
    const first = await proberFromEnv({ ...env });
    expect(first.policy.id).toBe("content-moderation");
    expect(first.calls).toBe(ENDPOINT_PROBER.callsPerRun);
    const named = await proberFromEnv({ ...env, PROBE_POLICY: "ticket-routing", PROBE_CALLS_PER_RUN: "6" });
    expect(named).toMatchObject({ policy: { id: "ticket-routing" }, calls: 6 });
    await expect(proberFromEnv({ ...env, PROBE_POLICY: "nope" })).rejects.toThrow(/no policy nope/);
  });
});
