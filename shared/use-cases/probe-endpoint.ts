/**
 * One run of the endpoint prober (issue 42, item 3): a blue/green deployment's rollback alarms
 * can only judge a new fleet that is called, and upstream traffic at a few calls a minute leaves
 * it uncalled for minutes at a time by chance. While the new fleet bakes (DescribeEndpoint's
 * pending deployment says so, the same flag the capacity follower publishes), the prober sends
 * the endpoint known items of its own, one after another, and counts what came back; outside a
 * bake it sends nothing. The items go to the endpoint only: no record, no event, no queue.
 */
import type { DecidesItems } from "../domain/decision-endpoint.ts";
import { EndpointOverloadedError } from "../domain/errors.ts";
import type { EndpointFleet } from "../domain/fleet-reading.ts";
import type { Item } from "../domain/item.ts";
import type { Policy } from "../domain/policy/policy.ts";

/** What one run needs. */
export interface ProbeEndpointDependencies {
  readonly fleet: Pick<EndpointFleet, "counts">;
  /** The endpoint, called once per item (no retries: the prober reports what each call met). */
  readonly endpoint: DecidesItems;
  /** The policy the known items name. */
  readonly policy: Policy;
  /** Calls per run while the new fleet bakes. */
  readonly calls: number;
  /** The known items' id prefix. */
  readonly itemIdPrefix: string;
}

/** What one run did. */
export interface ProbeRun {
  readonly baking: boolean;
  /** Calls sent. */
  readonly calls: number;
  /** Calls the endpoint replied to: a decision, or a busy answer (reached, and it spoke). */
  readonly replies: number;
  /** Calls answered with a decision. */
  readonly answers: number;
  /** Why each call that got no reply failed (timeouts, errors, answers that break the contract). */
  readonly failures: readonly string[];
}

/** The known item of call `n`: the same text every time, so its answer can be compared run to run. */
export function probeItem(policy: Policy, prefix: string, n: number): Item {
  return {
    id: `${prefix}${n}`,
    policy: policy.id,
    state:
      "A known item the decision pipeline sends its own endpoint while a new fleet bakes during a deployment. It is never recorded or acted on.",
  };
}

/** Runs one period: nothing outside a bake, else `calls` known items in turn. */
export async function probeEndpoint(deps: ProbeEndpointDependencies): Promise<ProbeRun> {
  const { baking } = await deps.fleet.counts();
  if (!baking) return { baking, calls: 0, replies: 0, answers: 0, failures: [] };
  let replies = 0;
  let answers = 0;
  const failures: string[] = [];
  for (let n = 1; n <= deps.calls; n++) {
    try {
      await deps.endpoint.decide(probeItem(deps.policy, deps.itemIdPrefix, n), deps.policy);
      replies++;
      answers++;
    } catch (error) {
      if (error instanceof EndpointOverloadedError) replies++;
      else failures.push((error as Error).message);
    }
  }
  return { baking, calls: deps.calls, replies, answers, failures };
}
