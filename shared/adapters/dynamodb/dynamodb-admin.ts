/**
 * Table administration for local runs and tests: whether a DynamoDB endpoint answers, and the
 * decisions table created on it (the CDK app creates it when deployed).
 */
import { CreateTableCommand, ListTablesCommand, ResourceInUseException } from "@aws-sdk/client-dynamodb";
import { dynamoDbClient, localServiceOptions } from "../aws-clients.ts";
import { createTableInput } from "./decisions-table.ts";

/** Whether the DynamoDB endpoint at `endpoint` answers ListTables. */
export async function tablesAnswer(endpoint: string): Promise<boolean> {
  const client = dynamoDbClient(localServiceOptions(endpoint));
  try {
    await client.send(new ListTablesCommand({}));
    return true;
  } catch {
    return false;
  } finally {
    client.destroy();
  }
}

/** Creates the decisions table on a local endpoint unless it exists. */
export async function ensureDecisionsTable(endpoint: string, tableName: string): Promise<void> {
  const client = dynamoDbClient(localServiceOptions(endpoint));
  try {
    await client.send(new CreateTableCommand(createTableInput(tableName)));
  } catch (error) {
    if (!(error instanceof ResourceInUseException)) throw error;
  } finally {
    client.destroy();
  }
}
