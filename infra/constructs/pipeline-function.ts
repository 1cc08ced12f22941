/**
 * How every pipeline function is built: Node.js 22 on ARM, ES module bundle with the policy
 * files beside it, its own log group, X-Ray tracing, the shared environment, and exactly the
 * table actions its code calls (`TABLE_ACCESS` in `shared/domain/topology.ts`). The cdk-nag
 * findings every such function carries are applied by the {@link FunctionFindings} aspect.
 */
import { fileURLToPath } from "node:url";
import { Duration, type IAspect, RemovalPolicy } from "aws-cdk-lib";
import type * as dynamodb from "aws-cdk-lib/aws-dynamodb";
import * as lambda from "aws-cdk-lib/aws-lambda";
import { LogLevel, NodejsFunction, OutputFormat } from "aws-cdk-lib/aws-lambda-nodejs";
import * as logs from "aws-cdk-lib/aws-logs";
import { NagSuppressions } from "cdk-nag";
import type { Construct, IConstruct } from "constructs";
import { ASYNC_LANE, BATCH_LANE, RECALIBRATION } from "../../shared/domain/topology.ts";

const ROOT = fileURLToPath(new URL("../..", import.meta.url));

/** What differs between functions. */
export interface FunctionSettings {
  readonly memoryMiB: number;
  readonly timeoutSeconds: number;
  readonly environment?: Record<string, string>;
  /** Exactly these actions on the decisions table (`TABLE_ACCESS`); none when empty. */
  readonly tableAccess: readonly string[];
  /** Concurrency kept for this function alone (`RESERVED_CONCURRENCY`). @default none: the account's pool */
  readonly reservedConcurrency?: number;
}

/** What every function of one pipeline shares. */
export interface FunctionDefaults {
  readonly table: dynamodb.Table;
  readonly environment: Record<string, string>;
  /** Folder whose *.json policies are bundled into `/var/task/policies`. @default events/policies */
  readonly policiesDir?: string;
  /** Whether functions that ask for reserved concurrency get it (an account under its quota cannot). @default true */
  readonly reserveConcurrency?: boolean;
}

/** Creates one pipeline function; see {@link functionFactory}. */
export type FunctionFactory = (
  name: string,
  file: string,
  settings: FunctionSettings,
  within?: Construct,
) => NodejsFunction;

/**
 * A factory for the pipeline's functions in `scope`: each is the child `name` of `scope`, or,
 * given `within` (a construct with id `name` in `scope`), that construct's `Default` child. CDK
 * leaves a `Default` step out of logical ids, so a function wrapped in its own construct keeps
 * the ids it had as a direct child; its log group stays `<name>Logs` in `scope` for the same reason.
 */
export function functionFactory(scope: Construct, defaults: FunctionDefaults): FunctionFactory {
  const policiesDir = defaults.policiesDir ?? `${ROOT}/events/policies`;
  return (name, file, settings, within) => {
    if (within && (within.node.id !== name || within.node.scope !== scope))
      throw new Error(
        `a function's construct must be "${name}" in ${scope.node.path}, got ${within.node.path}`,
      );
    const logGroup = new logs.LogGroup(scope, `${name}Logs`, {
      retention: logs.RetentionDays.ONE_MONTH,
      removalPolicy: RemovalPolicy.DESTROY,
    });
    const created = new NodejsFunction(within ?? scope, within ? "Default" : name, {
      entry: `${ROOT}/functions/${file}`,
      handler: "handler",
      runtime: lambda.Runtime.NODEJS_22_X,
      architecture: lambda.Architecture.ARM_64,
      memorySize: settings.memoryMiB,
      timeout: Duration.seconds(settings.timeoutSeconds),
      ...(settings.reservedConcurrency !== undefined && defaults.reserveConcurrency !== false
        ? { reservedConcurrentExecutions: settings.reservedConcurrency }
        : {}),
      logGroup,
      tracing: lambda.Tracing.ACTIVE,
      environment: {
        ...defaults.environment,
        // The tracer's service name: the function's name in the logs' and metrics' style.
        POWERTOOLS_SERVICE_NAME: name.replace(/[a-z](?=[A-Z])/g, "$&-").toLowerCase(),
        ...settings.environment,
      },
      depsLockFilePath: `${ROOT}/package-lock.json`,
      projectRoot: ROOT,
      bundling: {
        format: OutputFormat.ESM,
        // Findings only: no per-bundle size lines in the synth output.
        logLevel: LogLevel.ERROR,
        target: "node22",
        mainFields: ["module", "main"],
        // Some dependencies still call require(); give the ES module bundle one.
        banner: "import { createRequire } from 'module'; const require = createRequire(import.meta.url);",
        // The AWS SDK is bundled, at the version package-lock.json pins and the tests ran, not
        // left to whatever version the runtime ships: the clients' timeouts mean different things
        // in different SDK releases (shared/adapters/aws-clients.ts). `npm run synth` checks it.
        bundleAwsSDK: true,
        commandHooks: {
          beforeBundling: () => [],
          beforeInstall: () => [],
          afterBundling: (_input: string, output: string) => [
            `mkdir -p ${output}/policies`,
            `cp ${policiesDir}/*.json ${output}/policies/`,
          ],
        },
      },
    });
    // Least privilege: the table actions this function's code calls, nothing more.
    if (settings.tableAccess.length > 0)
      defaults.table.grant(created, ...settings.tableAccess.map((action) => `dynamodb:${action}`));
    return created;
  };
}

/** The pipeline bucket's prefixes the functions are granted, as cdk-nag writes them (slashes escaped). */
const BUCKET_PREFIXES = [
  RECALIBRATION.prefix,
  BATCH_LANE.filesPrefix,
  BATCH_LANE.incomingPrefix,
  ASYNC_LANE.prefixes.input,
  ASYNC_LANE.prefixes.items,
  ASYNC_LANE.prefixes.output,
];
const escaped = (prefix: string) => prefix.replaceAll("/", "\\/");

const PINNED_RUNTIME =
  "Pinned to nodejs22.x, the runtime the project tests and supports; newer runtimes are adopted deliberately";

/**
 * Suppresses, on every pipeline function under the construct it is added to, the cdk-nag findings
 * such a function carries, each with its reason. An aspect visits the tree at synthesis, when
 * each function is complete, so the suppressions reach the children added after it was created
 * (event source mappings, invoke configurations), and no list of functions has to be kept.
 */
export class FunctionFindings implements IAspect {
  visit(node: IConstruct): void {
    if (node instanceof NodejsFunction) suppressFunctionFindings(node);
  }
}

function suppressFunctionFindings(fn: NodejsFunction): void {
  NagSuppressions.addResourceSuppressions(
    fn,
    [
      {
        id: "AwsSolutions-IAM4",
        reason: "AWSLambdaBasicExecutionRole only allows writing this function's logs",
        appliesTo: ["Policy::arn:<AWS::Partition>:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole"],
      },
      {
        id: "AwsSolutions-IAM5",
        reason:
          "X-Ray's trace actions have no resource-level permissions; a query may read any of the decisions table's indexes (index/*); a function reads or writes the objects under its own prefix of the pipeline bucket",
        appliesTo: [
          "Resource::*",
          { regex: "/^Resource::<PipelineDecisions[0-9A-F]{8}\\.Arn>\\/index\\/\\*$/g" },
          {
            regex: `/^Resource::<PipelineFilesBucket[0-9A-F]{8}\\.Arn>\\/(${BUCKET_PREFIXES.map(escaped).join("|")})\\*$/g`,
          },
        ],
      },
      { id: "AwsSolutions-L1", reason: PINNED_RUNTIME },
      { id: "Serverless-LambdaLatestVersion", reason: PINNED_RUNTIME },
      {
        id: "Serverless-LambdaEventSourceMappingDestination",
        reason:
          "On-failure destinations exist for stream sources only; an SQS event source dead-letters through its queue's redrive policy, which every consumed queue has",
      },
      {
        id: "Serverless-LambdaDLQ",
        reason:
          "A function DLQ only catches asynchronous invocations: the SQS-fed functions dead-letter through their queues' redrive policies, the URL and operator functions are invoked synchronously, and the scheduled drift function has an on-failure destination (which supersedes a DLQ)",
      },
    ],
    true,
  );
}
