/**
 * The decisions table, deployed: on-demand, point-in-time recovery, retained on stack deletion,
 * with the key schema, TTL attribute and indexes of `DECISIONS_TABLE_SCHEMA` (the same schema the
 * local stand-in creates), so the deployed table and the tested one cannot drift apart.
 */
import { RemovalPolicy } from "aws-cdk-lib";
import * as dynamodb from "aws-cdk-lib/aws-dynamodb";
import type { Construct } from "constructs";
import { DECISIONS_TABLE_SCHEMA } from "../../shared/adapters/decisions-table.ts";

/** Creates the decisions table in `scope` (construct id `Decisions`). */
export function createDecisionsTable(scope: Construct): dynamodb.Table {
  const schema = DECISIONS_TABLE_SCHEMA;
  const table = new dynamodb.Table(scope, "Decisions", {
    partitionKey: { name: schema.partitionKey, type: dynamodb.AttributeType.STRING },
    sortKey: { name: schema.sortKey, type: dynamodb.AttributeType.STRING },
    billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
    encryption: dynamodb.TableEncryption.AWS_MANAGED,
    timeToLiveAttribute: schema.ttlAttribute,
    removalPolicy: RemovalPolicy.RETAIN,
  });
  // The schema's sparse, sharded indexes, each with the projection its readers need.
  for (const index of schema.indexes)
    table.addGlobalSecondaryIndex({
      indexName: index.name,
      partitionKey: { name: index.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: index.sortKey, type: dynamodb.AttributeType.STRING },
      ...(index.include.length > 0
        ? { projectionType: dynamodb.ProjectionType.INCLUDE, nonKeyAttributes: [...index.include] }
        : { projectionType: dynamodb.ProjectionType.KEYS_ONLY }),
    });
  return table;
}
