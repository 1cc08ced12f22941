/**
 * The functions' SDK clients are built from the environment they are handed, not from whatever
 * the process environment holds: the local mode gives its functions the stand-ins' endpoints
 * explicitly (before, it copied them into process.env, where every later client in the process,
 * the CLI's included, picked them up).
 */
import { describe, expect, it } from "vitest";
import { destroyClients, dynamoClient, sqsClient } from "../../functions/support/clients.ts";
import { awsOptionsFromEnv } from "../../shared/adapters/aws-clients.ts";

describe("awsOptionsFromEnv", () => {
  it("reads the service's endpoint, else the general one, the region and the credentials", () => {
    const env = {
      AWS_ENDPOINT_URL: "http://127.0.0.1:9000",
      AWS_ENDPOINT_URL_SQS: "http://127.0.0.1:9324",
      AWS_REGION: "eu-west-1",
      AWS_ACCESS_KEY_ID: "id",
      AWS_SECRET_ACCESS_KEY: "secret",
      AWS_SESSION_TOKEN: "token",
    };
    expect(awsOptionsFromEnv(env, "SQS")).toEqual({
      endpoint: "http://127.0.0.1:9324",
      region: "eu-west-1",
      credentials: { accessKeyId: "id", secretAccessKey: "secret", sessionToken: "token" },
    });
    expect(awsOptionsFromEnv(env, "DYNAMODB").endpoint).toBe("http://127.0.0.1:9000");
  });

  it("leaves to the SDK's chain what the environment does not set", () => {
    expect(awsOptionsFromEnv({}, "S3")).toEqual({});
    // A key without its secret is no credential.
    expect(awsOptionsFromEnv({ AWS_ACCESS_KEY_ID: "id", AWS_DEFAULT_REGION: "us-west-2" }, "S3")).toEqual({
      region: "us-west-2",
    });
  });
});

describe("the functions' clients", () => {
  const local = (port: number) => ({
    AWS_REGION: "us-east-1",
    AWS_ACCESS_KEY_ID: "local",
    AWS_SECRET_ACCESS_KEY: "local",
    AWS_ENDPOINT_URL_DYNAMODB: `http://127.0.0.1:${port}`,
    AWS_ENDPOINT_URL_SQS: `http://127.0.0.1:${port + 1}`,
  });

  it("connect where their environment says, one client per environment", async () => {
    const first = local(18_000);
    const second = local(19_000);
    try {
      expect(dynamoClient(first)).toBe(dynamoClient(first));
      expect(dynamoClient(second)).not.toBe(dynamoClient(first));
      const endpoint = await dynamoClient(second).config.endpoint?.();
      expect(endpoint?.port).toBe(19_000);
      expect((await sqsClient(first).config.endpoint?.())?.port).toBe(18_001);
      expect(await sqsClient(first).config.region()).toBe("us-east-1");
      expect((await sqsClient(first).config.credentials()).accessKeyId).toBe("local");
    } finally {
      destroyClients(first);
      destroyClients(second);
    }
  });

  it("are made again after destroyClients", () => {
    const env = local(20_000);
    const before = dynamoClient(env);
    destroyClients(env);
    expect(dynamoClient(env)).not.toBe(before);
    destroyClients(env);
  });
});
