/**
 * A canary that needs no luck (issue 42, item 3), on the deployment simulation with the stack as
 * synthesized: upstream calls arrive as a Poisson process at 0.5, 1 and 2 calls a minute and each
 * call reaches the new fleet by chance. The silent alarm the stack had before judged the new
 * fleet's own calls, so those chance gaps rolled a healthy fleet back in most runs; with the
 * endpoint prober calling while the new fleet bakes and the silent alarm judging its replies, a
 * healthy fleet stays in under 1% of runs, a broken or slow one still rolls back, and a fleet
 * nobody tried (no prober runs) still cannot pass a quiet hour.
 */
import { Template } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import { type NewFleet, simulateDeployment } from "../../infra/capacity/simulation/deployment-sim.ts";
import { CfnTemplate } from "../../infra/capacity/template/template.ts";
import {
  type DeploymentPlan,
  readDeploymentPlan,
} from "../../infra/capacity/template/template-deployment.ts";
import { ENDPOINT_PROBER } from "../../shared/domain/topology/prober.ts";
import { GUARDRAIL_MATH } from "../../shared/domain/topology.ts";
import { synthStack } from "../helpers/synth-stack.ts";

type Resource = { Type: string; Properties: Record<string, unknown> };
type Json = { Resources: Record<string, Resource> };
let json: Json;
let plan: DeploymentPlan;

beforeAll(() => {
  json = Template.fromStack(synthStack()).toJSON() as Json;
  plan = readDeploymentPlan(new CfnTemplate(json));
}, 180_000);

const RUNS = 2_000;
const RATES = [0.5, 1, 2];

/**
 * The share of `RUNS` seeded deployments of `fleet` at `callsPerMinute` that rolled back. It
 * yields now and then, so the test worker still answers its runner during the long loop.
 */
async function rollbackShare(
  p: DeploymentPlan,
  fleet: NewFleet,
  callsPerMinute: number,
  proberMissedShare = 0,
): Promise<number> {
  let rolledBack = 0;
  for (let seed = 1; seed <= RUNS; seed++) {
    if (seed % 100 === 0) await new Promise((resolve) => setImmediate(resolve));
    const traffic = { callsPerMinute, callSeconds: 1.5, seed, proberMissedShare };
    if (simulateDeployment(p, fleet, traffic).outcome === "rolledBack") rolledBack++;
  }
  return rolledBack / RUNS;
}

/** The template with its silent alarm judging the new fleet's own calls, as before, and no prober. */
function before(): DeploymentPlan {
  const old = structuredClone(json);
  const metricsOf = (r: Resource) => r.Properties.Metrics as Record<string, unknown>[] | undefined;
  const refusing = Object.values(old.Resources).find((r) =>
    metricsOf(r)?.some((m) => m.Expression === GUARDRAIL_MATH.refusedShare),
  )!;
  const own = metricsOf(refusing)!.filter((m) => m.Id === "calls" || m.Id === "refused");
  for (const [id, r] of Object.entries(old.Resources)) {
    const env = (r.Properties.Environment as { Variables?: Record<string, unknown> } | undefined)?.Variables;
    if (r.Type === "AWS::Lambda::Function" && env?.PROBED_ENDPOINT_NAME !== undefined)
      delete old.Resources[id];
    const metrics = metricsOf(r);
    const silent = metrics?.find((m) => m.Expression === ENDPOINT_PROBER.silentWhileBaking);
    if (!metrics || !silent) continue;
    // The new fleet's own calls and refusals (as the refusal alarm reads them) for the prober's replies.
    silent.Expression = GUARDRAIL_MATH.silentWhileBaking;
    r.Properties.Metrics = [...metrics.filter((m) => m.Id !== "replies"), ...own];
  }
  return readDeploymentPlan(new CfnTemplate(old));
}

describe("a deployment at a few upstream calls a minute (Poisson)", () => {
  it("has the prober call the new fleet every minute of its bake", () => {
    expect(plan.prober).toEqual({ callsPerMinute: ENDPOINT_PROBER.callsPerRun });
  });

  it.each(RATES)("keeps a healthy fleet in over 99%% of runs at %s calls a minute", async (rate) => {
    expect(await rollbackShare(plan, { kind: "healthy" }, rate)).toBeLessThan(0.01);
    // Even when one prober run in ten fails or publishes its figures in the next minute.
    expect(await rollbackShare(plan, { kind: "healthy" }, rate, 0.1)).toBeLessThan(0.01);
  });

  it.each(RATES)(
    "still rolls back a fleet that refuses every call, or runs twice as slowly, at %s a minute",
    async (rate) => {
      expect(await rollbackShare(plan, { kind: "refusesAll" }, rate)).toBe(1);
      expect(await rollbackShare(plan, { kind: "slower", factor: 2 }, rate)).toBeGreaterThan(0.99);
    },
  );

  it("rolls back a fleet nobody tried: no prober runs and no call comes", () => {
    const quiet = { callsPerMinute: 0, callSeconds: 1.5 };
    expect(simulateDeployment({ ...plan, prober: undefined }, { kind: "healthy" }, quiet)).toMatchObject({
      outcome: "rolledBack",
      by: expect.stringMatching(/NewFleetSilent$/),
    });
    expect(simulateDeployment(plan, { kind: "healthy" }, quiet).outcome).toBe("completed");
  });

  it("rolled a healthy fleet back in most runs with the silent alarm on its own calls", async () => {
    const old = before();
    expect(old.prober).toBeUndefined();
    const shares: number[] = [];
    for (const rate of RATES) shares.push(await rollbackShare(old, { kind: "healthy" }, rate));
    // 0.5, 1 and 2 calls a minute: the model gave 69% at 1 and 21% at 2.
    expect(shares[0]).toBeGreaterThan(0.8);
    expect(shares[1]).toBeGreaterThan(0.5);
    expect(shares[2]).toBeGreaterThan(0.1);
  });
});
