/**
 * Deploy day in moto's CloudFormation (issue 42 items 1 and 2): a first create that fails after
 * the stateful resources exist rolls back to exactly what the stack says it keeps, and an existing
 * deployment whose endpoints' log groups SageMaker already created updates to this template: this
 * template less its log retention, and the release before the stack named the groups (its
 * endpoint slice, kept in test/fixtures/release-before-log-groups.endpoint.template.json); the
 * shape whose template owned the groups (test/fixtures/owned-log-groups.endpoints.template.json)
 * updates too, and loses them, as docs/deploying.md says.
 *
 * What moto models and what it does not, plainly: it has no rollback (a failed CreateStack leaves
 * the stack CREATE_IN_PROGRESS with what it made), so the rollback is played as CloudFormation
 * plays a create's rollback: delete what the create made, except what is `DeletionPolicy:
 * Retain` (moto's DeleteStack does exactly that; `RetainExceptOnCreate` is deleted on a create's
 * rollback). Its CloudFormation does not model Cognito user pools (the pool's policy is checked on
 * the template, test/infra/isolation.test.ts), and it cannot run a custom resource's Lambda
 * (that needs Docker), so the log retention the update adds is read from the template, not
 * watched being applied. Whole templates need more than moto offers (outputs of resources it does
 * not model, SSM's bootstrap version): each test deploys the resources that matter and everything
 * they refer to. Skips, saying so, where moto is absent.
 */
import { readFileSync } from "node:fs";
import { Template } from "aws-cdk-lib/assertions";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import {
  awsJson,
  cloudFormation,
  type Moto,
  motoAvailable,
  resetMoto,
  s3,
  startMoto,
  xmlValues,
} from "../helpers/moto-server.ts";
import { synthStack } from "../helpers/synth-stack.ts";
import {
  type CfnTemplate,
  functionCodeObjects,
  sliceOf,
  withoutResources,
} from "../helpers/template-slice.ts";

if (!motoAvailable)
  console.warn(
    "SKIP: moto_server is absent (pip install 'moto[server]'), so deploy day is not played in moto",
  );

/** Stateful resource types: the ones a stack keeps, or must not leave behind. */
const STATEFUL = ["AWS::DynamoDB::Table", "AWS::Cognito::UserPool", "AWS::S3::Bucket", "AWS::KMS::Key"];
const SAGEMAKER_LOGS = "/aws/sagemaker/Endpoints/";

let moto: Moto | undefined;
let template: CfnTemplate;

beforeAll(async () => {
  if (!motoAvailable) return;
  // moto's SageMaker knows an older list of instance types; the endpoints' shape is the same.
  const stack = synthStack({ instanceType: "ml.c5.xlarge", asyncInstanceType: "ml.c5.xlarge" });
  template = Template.fromStack(stack).toJSON() as CfnTemplate;
  moto = await startMoto();
}, 180_000);

afterAll(() => moto?.stop());

// Each test starts from an empty account (the endpoints' names are fixed).
beforeEach(async () => {
  if (moto) await resetMoto(moto);
});

const idsOfType = (t: CfnTemplate, types: readonly string[]) =>
  Object.entries(t.Resources)
    .filter(([, r]) => types.includes(r.Type))
    .map(([id]) => id);

const parametersOf = (t: CfnTemplate): Record<string, string> => {
  const params: Record<string, string> = {};
  Object.keys(t.Parameters ?? {}).forEach((name, i) => {
    params[`Parameters.member.${i + 1}.ParameterKey`] = name;
    params[`Parameters.member.${i + 1}.ParameterValue`] = name === "ModelBucket" ? "models" : "model.tar.gz";
  });
  return params;
};

const stackCall = (action: string, name: string, t: CfnTemplate) =>
  cloudFormation(moto!, action, {
    StackName: name,
    TemplateBody: JSON.stringify(t),
    "Capabilities.member.1": "CAPABILITY_IAM",
    ...parametersOf(t),
  });

const stackStatus = async (name: string) =>
  xmlValues(await cloudFormation(moto!, "DescribeStacks", { StackName: name }), "StackStatus")[0];

/**
 * The stateful resources moto holds now, by type: table and bucket names. KMS keys are left out:
 * moto's CloudFormation makes them but neither deletes one with its stack nor describes one it made.
 */
async function inventory(): Promise<Record<string, string[]>> {
  const { TableNames } = await awsJson<{ TableNames: string[] }>(
    moto!,
    "dynamodb",
    "DynamoDB_20120810.ListTables",
    {},
  );
  const buckets = xmlValues(await s3(moto!, "GET", "/"), "Name");
  return { "AWS::DynamoDB::Table": TableNames, "AWS::S3::Bucket": buckets };
}

/** What `after` holds that `before` did not, by type. */
const added = (before: Record<string, string[]>, after: Record<string, string[]>) =>
  Object.fromEntries(
    Object.entries(after).map(([type, names]) => [type, names.filter((n) => !before[type]!.includes(n))]),
  );

/** How many resources of each moto-modelled stateful type the template gives `policy`. */
const countByType = (types: readonly string[], keep: (policy: string | undefined) => boolean) =>
  Object.fromEntries(
    types.map((type) => [
      type,
      Object.values(template.Resources).filter((r) => r.Type === type && keep(r.DeletionPolicy)).length,
    ]),
  );

describe.skipIf(!motoAvailable)("deploy day in moto's CloudFormation", () => {
  it("rolls a first create that fails after the table exists back to exactly the resources marked Retain", async () => {
    const stateful = idsOfType(template, STATEFUL);
    const slice = sliceOf(template, stateful);
    // A resource that fails once every stateful resource exists: a log group whose name is taken.
    const tripwire = "/deploy-day/tripwire";
    await awsJson(moto!, "logs", "Logs_20140328.CreateLogGroup", { logGroupName: tripwire });
    slice.Resources.Tripwire = {
      Type: "AWS::Logs::LogGroup",
      Properties: { LogGroupName: tripwire },
      DependsOn: stateful,
    };
    const before = await inventory();
    await expect(stackCall("CreateStack", "first-create", slice)).rejects.toThrow(/already exists/);
    expect(await stackStatus("first-create")).toBe("CREATE_IN_PROGRESS");
    const made = added(before, await inventory());
    const modelled = Object.keys(made);
    // moto's CloudFormation made the stack's table and buckets (it does not model the pool).
    expect(Object.fromEntries(modelled.map((t) => [t, made[t]!.length]))).toEqual(
      countByType(modelled, () => true),
    );

    // The rollback: a refused delete here is what leaves a real stack ROLLBACK_FAILED.
    const rollback = await cloudFormation(moto!, "DeleteStack", { StackName: "first-create" }).then(
      () => "rolled back",
      (e: unknown) => `rollback failed: ${e instanceof Error ? e.message : String(e)}`,
    );
    expect(rollback).toBe("rolled back");
    const now = await inventory();
    const left = Object.fromEntries(
      modelled.map((t) => [t, made[t]!.filter((n) => now[t]!.includes(n)).length]),
    );
    expect(left).toEqual(countByType(modelled, (policy) => policy === "Retain"));
    // What docs/deploying.md says a failed first create keeps: the decisions table (and the pool).
    expect(left).toEqual({ "AWS::DynamoDB::Table": 1, "AWS::S3::Bucket": 0 });
  }, 120_000);

  it("updates an earlier deployment, whose endpoint log groups SageMaker created, to this template", async () => {
    const endpoints = idsOfType(template, ["AWS::SageMaker::Endpoint"]);
    expect(endpoints.length).toBe(2);
    const current = sliceOf(template, endpoints);
    // The earlier shape: no resource of the stack's own names or shapes the endpoints' log groups.
    const shaping = Object.entries(current.Resources)
      .filter(
        ([, r]) =>
          r.Type === "Custom::LogRetention" ||
          (r.Type === "AWS::Logs::LogGroup" && String(r.Properties?.LogGroupName).startsWith(SAGEMAKER_LOGS)),
      )
      .map(([id]) => id);
    expect(shaping.length).toBe(2);
    await upgrade(sliceOf(withoutResources(current, new Set(shaping)), endpoints), current);
  }, 120_000);

  it("updates the release before the stack named the log groups (its endpoint as then synthesized) to this template", async () => {
    const release = fixture("release-before-log-groups.endpoint.template.json");
    const current = sliceOf(template, idsOfType(template, ["AWS::SageMaker::Endpoint"]));
    await upgrade(release, current);
  }, 120_000);

  it("updates the shape whose template owned the log groups, which then loses them (the hand step docs/deploying.md gives)", async () => {
    const owned = fixture("owned-log-groups.endpoints.template.json");
    const groups = Object.values(owned.Resources).filter((r) => r.Type === "AWS::Logs::LogGroup");
    expect(groups.length).toBe(2);
    const current = sliceOf(template, idsOfType(template, ["AWS::SageMaker::Endpoint"]));
    await putFunctionCode(current);
    const sageMakerGroups = async () =>
      (
        await awsJson<{ logGroups: unknown[] }>(moto!, "logs", "Logs_20140328.DescribeLogGroups", {
          logGroupNamePrefix: SAGEMAKER_LOGS,
        })
      ).logGroups.length;
    await stackCall("CreateStack", "owned", owned);
    expect(await sageMakerGroups()).toBe(2);
    await stackCall("UpdateStack", "owned", current);
    expect(await stackStatus("owned")).toBe("UPDATE_COMPLETE");
    // The removed groups go with their policy (Delete); SageMaker makes them again, without a retention.
    expect(await sageMakerGroups()).toBe(0);
  }, 120_000);
});

const fixture = (name: string) =>
  JSON.parse(readFileSync(new URL(`../fixtures/${name}`, import.meta.url), "utf8")) as CfnTemplate;

/** Puts a stand-in for each function's code where the template says its zip lies. */
async function putFunctionCode(t: CfnTemplate): Promise<void> {
  for (const { bucket, key } of functionCodeObjects(t)) {
    await s3(moto!, "PUT", `/${bucket}`).catch(() => undefined);
    await s3(moto!, "PUT", `/${bucket}/${key}`, new Uint8Array([80, 75, 5, 6, ...Array(18).fill(0)]));
  }
}

/**
 * Deploys `earlier`, lets SageMaker create and write its endpoints' log groups, updates to
 * `current`, and checks the update completed with every group's events kept and given a retention.
 */
async function upgrade(earlier: CfnTemplate, current: CfnTemplate): Promise<void> {
  await putFunctionCode(current);
  await stackCall("CreateStack", "upgrade", earlier);
  expect(await stackStatus("upgrade")).toBe("CREATE_COMPLETE");
  // SageMaker creates each endpoint's group (never expiring) and writes into it.
  const groups = idsOfType(earlier, ["AWS::SageMaker::Endpoint"]).map(
    (id) => `${SAGEMAKER_LOGS}${earlier.Resources[id]!.Properties!.EndpointName}`,
  );
  expect(groups.length).toBeGreaterThan(0);
  const logStreamName = "AllTraffic/i-0";
  for (const logGroupName of groups) {
    await awsJson(moto!, "logs", "Logs_20140328.CreateLogGroup", { logGroupName });
    await awsJson(moto!, "logs", "Logs_20140328.CreateLogStream", { logGroupName, logStreamName });
    await awsJson(moto!, "logs", "Logs_20140328.PutLogEvents", {
      logGroupName,
      logStreamName,
      logEvents: [{ timestamp: Date.now(), message: "written before the upgrade" }],
    });
  }

  await stackCall("UpdateStack", "upgrade", current);
  expect(await stackStatus("upgrade")).toBe("UPDATE_COMPLETE");
  for (const logGroupName of groups) {
    const read = await awsJson<{ events: { message: string }[] }>(
      moto!,
      "logs",
      "Logs_20140328.FilterLogEvents",
      {
        logGroupName,
      },
    );
    expect(
      read.events.map((e) => e.message),
      logGroupName,
    ).toEqual(["written before the upgrade"]);
    // moto cannot run the retention's Lambda: the template asks for it on each existing group.
    const retention = Object.values(current.Resources).find(
      (r) => r.Type === "Custom::LogRetention" && r.Properties?.LogGroupName === logGroupName,
    );
    expect(retention?.Properties?.RetentionInDays, logGroupName).toBe(30);
  }
}
