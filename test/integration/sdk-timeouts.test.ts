/**
 * The AWS SDK clients' timeouts against the calls they carry. A batched endpoint call of ten
 * fresh items takes about 15 s, so a request timeout that fits DynamoDB or SQS would cut it short
 * (older SDK releases applied the 10 s request timeout as a socket idle timeout, and InvokeEndpoint
 * sends nothing until the model has answered). Checked on a real HTTP server that answers late,
 * through the same factory the functions use.
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { InvokeEndpointCommand } from "@aws-sdk/client-sagemaker-runtime";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ENDPOINT_TIMEOUTS,
  localServiceOptions,
  S3_TIMEOUTS,
  SDK_REQUEST_TIMEOUTS,
  sageMakerRuntimeClient,
} from "../../shared/adapters/aws-clients.ts";
import {
  CALIBRATION_ENDPOINT_CALLS,
  ENDPOINT_CALLS,
  SERVERLESS_DECIDE,
} from "../../shared/domain/topology.ts";

/** Answers every request after `delayMs`, as a busy model would. */
let server: Server;
let url: string;
const delayMs = SDK_REQUEST_TIMEOUTS.requestTimeout + 1_000;

beforeAll(async () => {
  server = createServer((req, res) => {
    req.resume();
    const timer = setTimeout(
      () => res.writeHead(200, { "content-type": "application/json" }).end('{"answered":"late"}'),
      delayMs,
    );
    res.on("close", () => clearTimeout(timer));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise<void>((resolve) => server.close(() => resolve()));
});

describe("SDK timeouts", () => {
  it("lets an endpoint call run past the request timeout of the fast services", async () => {
    const client = sageMakerRuntimeClient(localServiceOptions(url));
    try {
      const output = await client.send(
        new InvokeEndpointCommand({ EndpointName: "slow", ContentType: "application/json", Body: "{}" }),
        { abortSignal: AbortSignal.timeout(ENDPOINT_CALLS.timeoutMs) },
      );
      expect(JSON.parse(new TextDecoder().decode(output.Body))).toEqual({ answered: "late" });
    } finally {
      client.destroy();
    }
  }, 60_000);

  it("bounds an endpoint call by its own abort signal first, SageMaker's 60 s limit next", () => {
    const longestCall = Math.max(
      ENDPOINT_CALLS.timeoutMs,
      SERVERLESS_DECIDE.endpointTimeoutMs,
      CALIBRATION_ENDPOINT_CALLS.timeoutMs,
    );
    expect(ENDPOINT_TIMEOUTS.requestTimeout).toBeGreaterThan(longestCall);
    expect(ENDPOINT_TIMEOUTS.requestTimeout).toBeGreaterThan(60_000);
    // A breached request timeout is an error, not a logged warning, for every bounded client.
    expect(ENDPOINT_TIMEOUTS.throwOnRequestTimeout).toBe(true);
    expect(SDK_REQUEST_TIMEOUTS.throwOnRequestTimeout).toBe(true);
    // S3 uploads may be slow but not silent.
    expect(S3_TIMEOUTS).not.toHaveProperty("requestTimeout");
    expect(S3_TIMEOUTS.socketTimeout).toBeGreaterThan(0);
  });
});
