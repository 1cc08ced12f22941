/**
 * The adapters every function shares, built from the environment once per execution environment.
 */
import { fileURLToPath } from "node:url";
import { DynamoDbDecisionStore } from "../shared/adapters/dynamodb-decision-store.ts";
import { EventPublisher, type PublishesEvents } from "../shared/adapters/event-publisher.ts";
import type { DecisionStore } from "../shared/domain/decision-store.ts";
import { PolicyRegistry } from "../shared/domain/policy/registry.ts";
import { dynamoClient, eventBridgeClient } from "./clients.ts";
import { requireEnv } from "./config.ts";

/** Default policies: the samples shipped beside the functions. */
export const BUNDLED_POLICIES = fileURLToPath(new URL("../events/policies", import.meta.url));

/** Store, publisher and policies. */
export interface SharedDependencies {
  readonly policies: PolicyRegistry;
  readonly store: DecisionStore;
  readonly publisher: PublishesEvents;
}

/** Reads DECISIONS_TABLE, EVENT_BUS_NAME and POLICIES_DIR (optional). */
export async function sharedDependencies(env: NodeJS.ProcessEnv = process.env): Promise<SharedDependencies> {
  return {
    policies: await PolicyRegistry.fromFolder(env.POLICIES_DIR || BUNDLED_POLICIES),
    store: new DynamoDbDecisionStore(dynamoClient(), requireEnv("DECISIONS_TABLE", env)),
    publisher: new EventPublisher(eventBridgeClient(), requireEnv("EVENT_BUS_NAME", env)),
  };
}
