/**
 * The auto-action function: the target of the "auto" rule. Applies each confident decision once
 * (a redelivered event changes nothing) and emits "Item Actioned".
 */
import { Logger } from "@aws-lambda-powertools/logger";
import { injectLambdaContext } from "@aws-lambda-powertools/logger/middleware";
import middy from "@middy/core";
import type { EventBridgeEvent } from "aws-lambda";
import { applyDecision, type DecisionMadeDetail } from "../shared/targets/apply-decision.ts";
import { type SharedDependencies, sharedDependencies } from "./dependencies.ts";

const logger = new Logger({ serviceName: "auto-action" });

/** The handler for given dependencies. */
export function createAutoActionHandler(dependencies: () => Promise<SharedDependencies>) {
  let resolved: Promise<SharedDependencies> | undefined;
  async function lambdaHandler(
    event: EventBridgeEvent<"Decision Made", DecisionMadeDetail>,
  ): Promise<{ outcome: string }> {
    resolved ??= dependencies();
    const outcome = await applyDecision(event.detail, await resolved);
    logger.info("decision applied", { itemId: event.detail.itemId, outcome });
    return { outcome };
  }
  return middy(lambdaHandler).use(injectLambdaContext(logger));
}

/** The Lambda entry point. */
export const handler = createAutoActionHandler(() => sharedDependencies());
