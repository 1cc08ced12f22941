/**
 * The decisions table as deployed: on demand, point-in-time recovery, AWS managed encryption,
 * TTL, retained when the stack goes, and the secondary indexes its schema lists. The key schema
 * and the indexes come from one definition (`DECISIONS_TABLE_SCHEMA`), which the local stand-in
 * reads too.
 */
import { RemovalPolicy } from "aws-cdk-lib";
import * as dynamodb from "aws-cdk-lib/aws-dynamodb";
import { Construct } from "constructs";
import { DECISIONS_TABLE_SCHEMA } from "../../shared/adapters/decisions-table.ts";

/** A global secondary index, as a table schema lists it. */
export interface IndexSpec {
  readonly name: string;
  readonly partitionKey: string;
  readonly sortKey?: string;
  /** Attributes copied into the index besides its keys; `"ALL"` for every attribute. @default "ALL" */
  readonly projection?: "ALL" | "KEYS_ONLY" | readonly string[];
}

/** A table's key schema, TTL attribute and indexes. */
export interface TableSpec {
  readonly partitionKey: string;
  readonly sortKey: string;
  readonly ttlAttribute: string;
  readonly indexes: readonly IndexSpec[];
}

/** Whether a schema entry describes an index (a name and a partition key). */
function isIndexSpec(value: unknown): value is IndexSpec {
  const entry = value as Partial<IndexSpec> | null;
  return (
    typeof entry === "object" && typeof entry?.name === "string" && typeof entry.partitionKey === "string"
  );
}

/** The table spec of a schema object: its keys, its TTL and every entry of it that is an index. */
export function tableSpecOf(schema: {
  readonly partitionKey: string;
  readonly sortKey: string;
  readonly ttlAttribute: string;
}): TableSpec {
  const entries = Object.values(schema).flatMap((value) => (Array.isArray(value) ? value : [value]));
  return { ...schema, indexes: entries.filter(isIndexSpec) };
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
  /** Names of its global secondary indexes. */
  public readonly indexNames: readonly string[];

  constructor(scope: Construct, id: string, props: DecisionsTableProps = {}) {
    super(scope, id);
    const spec = props.spec ?? tableSpecOf(DECISIONS_TABLE_SCHEMA);
    this.table = new dynamodb.Table(this, "Default", {
      partitionKey: key(spec.partitionKey),
      sortKey: key(spec.sortKey),
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      timeToLiveAttribute: spec.ttlAttribute,
      removalPolicy: RemovalPolicy.RETAIN,
    });
    for (const index of spec.indexes) {
      const projection = index.projection ?? "ALL";
      this.table.addGlobalSecondaryIndex({
        indexName: index.name,
        partitionKey: key(index.partitionKey),
        ...(index.sortKey ? { sortKey: key(index.sortKey) } : {}),
        ...(projection === "ALL"
          ? {}
          : projection === "KEYS_ONLY"
            ? { projectionType: dynamodb.ProjectionType.KEYS_ONLY }
            : { projectionType: dynamodb.ProjectionType.INCLUDE, nonKeyAttributes: [...projection] }),
      });
    }
    this.indexNames = spec.indexes.map((index) => index.name);
  }
}
