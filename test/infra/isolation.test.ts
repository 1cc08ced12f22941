/**
 * Isolation and the review's open items (issue 32, observations 5 and 6), each read from the
 * synthesized template JSON: every event source mapping has a MaximumConcurrency; the sign-in,
 * authorizer and review functions reserve concurrency (unless an account's quota cannot take
 * it); reviewers' tokens are short-lived with a refresh route, and the sign-in routes have a
 * throttle of their own; the endpoint role writes only its own log group; no function may list
 * or read the whole bucket or touch object locks; every IAM5 suppression names what it applies
 * to; the table and user pool have deletion protection; the endpoint's log group gets a
 * retention before the endpoint exists; and what is retained is not left behind by a failed first
 * create, except the protected table and pool (test/infra/deploy-day-moto.test.ts plays it).
 */
import { Template } from "aws-cdk-lib/assertions";
import { beforeAll, describe, expect, it } from "vitest";
import { RESERVED_CONCURRENCY, REVIEW } from "../../shared/domain/topology.ts";
import { synthStack } from "../helpers/synth-stack.ts";

type Resource = {
  Type: string;
  Properties: Record<string, unknown>;
  DeletionPolicy?: string;
  UpdateReplacePolicy?: string;
  DependsOn?: string[];
  Metadata?: { cdk_nag?: { rules_to_suppress: { id: string; applies_to?: unknown[] }[] } };
};
let resources: Record<string, Resource>;

beforeAll(() => {
  resources = Template.fromStack(synthStack()).toJSON().Resources;
}, 180_000);

const ofType = (type: string, within = resources) =>
  Object.entries(within).filter(([, r]) => r.Type === type);
const functionId = (name: string) =>
  ofType("AWS::Lambda::Function").find(([id]) => new RegExp(`^Pipeline${name}[0-9A-F]{8}$`).test(id))![0];
const statementsOf = (roleRef: string) =>
  ofType("AWS::IAM::Policy")
    .filter(([, p]) => JSON.stringify(p.Properties.Roles).includes(`"${roleRef}"`))
    .flatMap(
      ([, p]) =>
        (
          p.Properties.PolicyDocument as {
            Statement: { Action: string | string[]; Resource: unknown; Condition?: unknown }[];
          }
        ).Statement,
    );

describe("isolation", () => {
  it("gives every event source mapping a MaximumConcurrency", () => {
    const mappings = ofType("AWS::Lambda::EventSourceMapping");
    expect(mappings.length).toBeGreaterThanOrEqual(5);
    for (const [id, m] of mappings)
      expect(
        (m.Properties.ScalingConfig as { MaximumConcurrency?: number })?.MaximumConcurrency,
        id,
      ).toBeGreaterThanOrEqual(2);
  });

  it("reserves concurrency for the sign-in, authorizer and review functions, unless asked not to", () => {
    for (const [name, reserved] of [
      ["ReviewSignIn", RESERVED_CONCURRENCY.reviewSignIn],
      ["ReviewAuthorizer", RESERVED_CONCURRENCY.reviewAuthorizer],
      ["Review", RESERVED_CONCURRENCY.review],
      ["ReviewPage", RESERVED_CONCURRENCY.reviewPage],
    ] as const)
      expect(resources[functionId(name)]!.Properties.ReservedConcurrentExecutions, name).toBe(reserved);
    const unreserved = Template.fromStack(synthStack({ reserveConcurrency: false })).toJSON()
      .Resources as Record<string, Resource>;
    expect(
      ofType("AWS::Lambda::Function", unreserved).filter(
        ([, f]) => f.Properties.ReservedConcurrentExecutions,
      ),
    ).toEqual([]);
  }, 180_000);
});

describe("sign-in", () => {
  it("issues tokens for minutes, renews them with a revocable refresh token, and throttles the sign-in routes apart", () => {
    const client = ofType("AWS::Cognito::UserPoolClient")[0]![1];
    expect(client.Properties).toMatchObject({
      IdTokenValidity: REVIEW.tokenMinutes,
      AccessTokenValidity: REVIEW.tokenMinutes,
      RefreshTokenValidity: REVIEW.sessionHours * 60,
      TokenValidityUnits: { IdToken: "minutes", AccessToken: "minutes", RefreshToken: "minutes" },
      EnableTokenRevocation: true,
    });
    const routes = ofType("AWS::ApiGatewayV2::Route").map(([, r]) => r.Properties);
    const open = routes
      .filter((r) => r.AuthorizationType === "NONE")
      .map((r) => String(r.RouteKey))
      .sort();
    expect(open).toEqual([
      "GET /auth/callback",
      "GET /auth/login",
      "GET /auth/logout",
      "GET /auth/refresh",
      "POST /auth/refresh",
    ]);
    const stage = ofType("AWS::ApiGatewayV2::Stage")[0]![1];
    const settings = stage.Properties.RouteSettings as Record<string, { ThrottlingRateLimit: number }>;
    expect(Object.keys(settings).sort()).toEqual(open);
    const data = (stage.Properties.DefaultRouteSettings as { ThrottlingRateLimit: number })
      .ThrottlingRateLimit;
    for (const key of open) expect(settings[key]!.ThrottlingRateLimit, key).toBeLessThan(data);
  });
});

describe("least privilege", () => {
  it("lets each endpoint write only its own log group, whose retention is set before the endpoint", () => {
    const endpoints = ofType("AWS::SageMaker::Endpoint");
    expect(endpoints.length).toBe(2);
    // SageMaker creates the group: the stack sets its retention (creating it only if absent).
    expect(
      ofType("AWS::Logs::LogGroup").filter(([, g]) =>
        String(g.Properties.LogGroupName).startsWith("/aws/sagemaker/"),
      ),
    ).toEqual([]);
    // The CDK's retention function, on the project's runtime rather than the newest one.
    const provider = ofType("AWS::Lambda::Function").filter(([id]) => id.startsWith("LogRetention"));
    expect(provider.map(([, f]) => f.Properties.Runtime)).toEqual(["nodejs22.x"]);
    for (const [endpointId, endpoint] of endpoints) {
      const [logsId, group] = ofType("Custom::LogRetention").find(
        ([, g]) =>
          g.Properties.LogGroupName === `/aws/sagemaker/Endpoints/${endpoint.Properties.EndpointName}`,
      )!;
      expect(group.Properties.RetentionInDays, endpointId).toBeGreaterThan(0);
      expect(endpoint.DependsOn, endpointId).toContain(logsId);
    }
    const roles = ofType("AWS::IAM::Role").filter(([, r]) =>
      JSON.stringify(r.Properties.AssumeRolePolicyDocument).includes("sagemaker.amazonaws.com"),
    );
    expect(roles.length).toBe(2);
    for (const [roleId] of roles) {
      const logs = statementsOf(roleId).filter((s) => [s.Action].flat().some((a) => a.startsWith("logs:")));
      expect(logs.length, roleId).toBeGreaterThan(0);
      expect(JSON.stringify(logs), roleId).not.toContain("/aws/sagemaker/*");
      expect(JSON.stringify(logs), roleId).not.toContain("Endpoints/*");
    }
  });

  it("grants no function s3:List*, s3:GetBucket* or object-lock actions; a listing only under its prefix", () => {
    const s3 = ofType("AWS::IAM::Policy").flatMap(([, p]) =>
      (
        p.Properties.PolicyDocument as { Statement: { Action: string | string[]; Condition?: unknown }[] }
      ).Statement.filter((s) => [s.Action].flat().some((a) => a.startsWith("s3:"))),
    );
    expect(s3.length).toBeGreaterThan(0);
    const actions = s3.flatMap((s) => [s.Action].flat());
    for (const forbidden of [
      "s3:List*",
      "s3:GetBucket*",
      "s3:GetObject*",
      "s3:PutObjectLegalHold",
      "s3:PutObjectRetention",
    ])
      expect(actions, forbidden).not.toContain(forbidden);
    for (const listing of s3.filter((s) => [s.Action].flat().includes("s3:ListBucket")))
      expect(JSON.stringify(listing.Condition)).toContain("s3:prefix");
  });

  it("names what every IAM5 suppression applies to", () => {
    const bare = Object.entries(resources).flatMap(([id, r]) =>
      (r.Metadata?.cdk_nag?.rules_to_suppress ?? [])
        .filter((rule) => rule.id === "AwsSolutions-IAM5" && !(rule.applies_to ?? []).length)
        .map(() => id),
    );
    expect(bare).toEqual([]);
  });
});

describe("what stays and what goes", () => {
  it("protects the table and the user pool from deletion and always retains them; the other stateful resources except on a failed first create", () => {
    const protectedOnes = [...ofType("AWS::DynamoDB::Table"), ...ofType("AWS::Cognito::UserPool")];
    expect(protectedOnes[0]![1].Properties.DeletionProtectionEnabled).toBe(true);
    expect(protectedOnes[1]![1].Properties.DeletionProtection).toBe("ACTIVE");
    // Protection refuses CloudFormation's delete as well: a rollback must not try it.
    for (const [id, r] of protectedOnes) {
      expect(r.DeletionPolicy, id).toBe("Retain");
      expect(r.UpdateReplacePolicy, id).toBe("Retain");
    }
    const retained = [...ofType("AWS::S3::Bucket"), ...ofType("AWS::KMS::Key")];
    // The two buckets, the alarms' key, and the storage keys of both endpoints and the async
    // lane's topics key.
    expect(retained.length).toBe(6);
    for (const [id, r] of retained) {
      expect(r.DeletionPolicy, id).toBe("RetainExceptOnCreate");
      expect(r.UpdateReplacePolicy, id).toBe("Retain");
    }
    const kept = Object.entries(resources).filter(([, r]) => r.DeletionPolicy === "Retain");
    expect(kept.map(([id]) => id).sort()).toEqual(protectedOnes.map(([id]) => id).sort());
  });
});
