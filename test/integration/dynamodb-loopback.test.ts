/**
 * DynamoDB Local listens on 127.0.0.1 only, as every other local stand-in does (before, its own
 * entry point bound every interface: ss showed *:PORT). Read from the kernel's socket table
 * (/proc/net/tcp and tcp6), so it holds whatever the JVM reports about itself.
 */
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { startDynamoDbLocal } from "../../infra/local/dynamodb/dynamodb-local.ts";
import { freePort } from "../helpers/local-pipeline.ts";

/** The local addresses listening on `port`, as /proc/net/tcp{,6} hold them (hex, little-endian for IPv4). */
function listeners(port: number): string[] {
  const hexPort = port.toString(16).toUpperCase().padStart(4, "0");
  return ["/proc/net/tcp", "/proc/net/tcp6"].flatMap((file) =>
    readFileSync(file, "utf8")
      .split("\n")
      .slice(1)
      .map((line) => line.trim().split(/\s+/))
      // Column 1 is local address:port, column 3 the state (0A: LISTEN).
      .filter((cols) => cols[1]?.endsWith(`:${hexPort}`) && cols[3] === "0A")
      .map((cols) => cols[1]!.split(":")[0]!),
  );
}

const LOOPBACK = new Set([
  "0100007F", // 127.0.0.1
  "0000000000000000FFFF00000100007F", // ::ffff:127.0.0.1
  "00000000000000000000000001000000", // ::1
]);

describe("DynamoDB Local", () => {
  it("listens on loopback only", async () => {
    const port = await freePort();
    const dynamo = await startDynamoDbLocal({ port });
    try {
      const addresses = listeners(port);
      expect(addresses.length).toBeGreaterThan(0);
      expect(addresses.filter((address) => !LOOPBACK.has(address))).toEqual([]);
    } finally {
      await dynamo.stop();
    }
  });
});
