/**
 * The capacity follower's latest reading in the decisions table, one item (`FLEET#intake` /
 * `LATEST`) overwritten each period: the follower writes it, the decide function reads it when
 * the endpoint refuses an item (a GetItem it is already allowed). It carries no index keys, so no
 * list or view of decisions ever sees it.
 */
import { type DynamoDBDocumentClient, GetCommand, PutCommand } from "@aws-sdk/lib-dynamodb";
import type { FleetReading, FleetReadings } from "../../domain/fleet-reading.ts";
import { tableCall } from "./dynamodb-calls.ts";

const KEY = { pk: "FLEET#intake", sk: "LATEST" } as const;

/** The readings item of one table. */
export class DynamoDbFleetReadings implements FleetReadings {
  constructor(
    private readonly client: DynamoDBDocumentClient,
    private readonly tableName: string,
  ) {}

  async latest(): Promise<FleetReading | undefined> {
    const output = await tableCall(
      "get fleet reading",
      () => this.client.send(new GetCommand({ TableName: this.tableName, Key: KEY })),
      () => false,
    );
    const item = output.Item;
    if (!item) return undefined;
    return {
      instances: Number(item.instances),
      desiredInstances: Number(item.desiredInstances),
      visible: Number(item.visible),
      inFlight: Number(item.inFlight),
      secondsPerItem: Number(item.secondsPerItem),
      at: Number(item.at),
    };
  }

  async record(reading: FleetReading): Promise<void> {
    await tableCall(
      "put fleet reading",
      () => this.client.send(new PutCommand({ TableName: this.tableName, Item: { ...KEY, ...reading } })),
      () => false,
    );
  }
}
