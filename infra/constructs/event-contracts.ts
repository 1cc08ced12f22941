/**
 * The pipeline's event contracts, published: an EventBridge schema registry holding the JSON
 * Schema of each event's detail (and of the item upstream systems send), generated from the zod
 * schemas at synth time (`shared/domain/contracts/json-schemas.ts`), so the registry can never drift
 * from what the code accepts and emits.
 */
import { Stack } from "aws-cdk-lib";
import * as eventschemas from "aws-cdk-lib/aws-eventschemas";
import { Construct } from "constructs";
import { eventJsonSchemas } from "../../shared/domain/contracts/json-schemas.ts";
import { EVENT_SOURCE } from "../../shared/domain/events.ts";

/** The registry and its schemas. */
export class EventContracts extends Construct {
  public readonly registry: eventschemas.CfnRegistry;
  public readonly schemas: eventschemas.CfnSchema[];

  constructor(scope: Construct, id: string) {
    super(scope, id);
    this.registry = new eventschemas.CfnRegistry(this, "Registry", {
      registryName: `${Stack.of(this).stackName}-contracts`,
      description: `JSON Schemas of the ${EVENT_SOURCE} events (the detail of each) and of the items upstream systems send`,
    });
    this.schemas = eventJsonSchemas().map(
      ({ name, detailType, schema }) =>
        new eventschemas.CfnSchema(this, name, {
          registryName: this.registry.attrRegistryName,
          schemaName: `${EVENT_SOURCE}@${name}`,
          type: "JSONSchemaDraft4",
          description: `The detail of "${detailType}" events`,
          content: JSON.stringify(schema),
        }),
    );
  }
}
