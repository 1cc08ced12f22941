/**
 * The decide handler's dependencies for handler tests: the policies and endpoint given, an
 * in-memory store and a publisher that accepts every event.
 */
import { InMemoryDecisionStore } from "../../shared/adapters/in-memory/in-memory-decision-store.ts";
import type { DecidesItems } from "../../shared/domain/decision-endpoint.ts";
import type { PolicyRegistry } from "../../shared/domain/policy/registry.ts";
import type { DecideDependencies } from "../../shared/use-cases/decide-message.ts";

/** Dependencies deciding on `endpoint` under `policies`, with nothing stored or published elsewhere. */
export function inMemoryDecideDependencies(
  policies: PolicyRegistry,
  endpoint: DecidesItems,
): DecideDependencies {
  return {
    policies,
    now: () => new Date(),
    store: new InMemoryDecisionStore(),
    publisher: { publish: async () => undefined },
    endpoint,
    publishLeaseMs: 1000,
  };
}
