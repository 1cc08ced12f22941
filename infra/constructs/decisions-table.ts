/**
 * The decisions table as deployed: on demand, point-in-time recovery, AWS managed encryption,
 * TTL, deletion protection, retained whatever the stack does (a failed first create included: its
 * rollback cannot delete a protected table), and the sparse, sharded secondary indexes its schema lists,
 * each with the projection its readers need. The key schema and the indexes come from one
 * definition (`DECISIONS_TABLE_SCHEMA`), which the local stand-in reads too, so the deployed
 * table and the tested one cannot drift apart.
 */
import { RemovalPolicy } from "aws-cdk-lib";
import * as dynamodb from "aws-cdk-lib/aws-dynamodb";
import { Construct } from "constructs";
import { DECISIONS_TABLE_SCHEMA } from "../../shared/adapters/dynamodb/decisions-table.ts";

/** A global secondary index, as a table schema lists it. */
export interface IndexSpec {
  readonly name: string;
  readonly partitionKey: string;
  readonly sortKey: string;
  /** Attributes copied into the index besides its keys; none for a keys-only index. */
  readonly include: readonly string[];
}

/** A table's key schema, TTL attribute and indexes (the shape of `DECISIONS_TABLE_SCHEMA`). */
export interface TableSpec {
  readonly partitionKey: string;
  readonly sortKey: string;
  readonly ttlAttribute: string;
  readonly indexes: readonly IndexSpec[];
}

/** Properties of {@link DecisionsTable}. */
export interface DecisionsTableProps {
  /** Keys, TTL and indexes. @default the decisions table's schema */
  readonly spec?: TableSpec;
}

const key = (name: string) => ({ name, type: dynamodb.AttributeType.STRING });

/** The decisions table (the construct's default child, so its logical id is the construct's). */
export class DecisionsTable extends Construct {
  public readonly table: dynamodb.Table;
  /** Names of its global secondary indexes (each alarmed on its own throttling). */
  public readonly indexNames: readonly string[];

  constructor(scope: Construct, id: string, props: DecisionsTableProps = {}) {
    super(scope, id);
    const spec = props.spec ?? DECISIONS_TABLE_SCHEMA;
    this.table = new dynamodb.Table(this, "Default", {
      partitionKey: key(spec.partitionKey),
      sortKey: key(spec.sortKey),
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      timeToLiveAttribute: spec.ttlAttribute,
      // Deleting it takes turning this off first. Protection refuses CloudFormation's delete too,
      // so the policy is Retain, never RetainExceptOnCreate: a failed first create that tried to
      // delete it would end ROLLBACK_FAILED; it rolls back keeping this (empty) table instead.
      deletionProtection: true,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    for (const index of spec.indexes)
      this.table.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: key(index.partitionKey),
        sortKey: key(index.sortKey),
        ...(index.include.length > 0
          ? { projectionType: dynamodb.ProjectionType.INCLUDE, nonKeyAttributes: [...index.include] }
          : { projectionType: dynamodb.ProjectionType.KEYS_ONLY }),
      });
    this.indexNames = spec.indexes.map((index) => index.name);
  }
}
