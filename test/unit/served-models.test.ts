/**
 * `decide local --endpoint-url` reads which models the endpoint serves, so that a cascade's later
 * tier it does not serve is skipped rather than refused item by item (the soak's 44 of 400 items
 * rejected: the sample moderation policy asked `demo-large` of a `decide serve` holding one model).
 */
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { servedModelNames } from "../../infra/local/served-models.ts";

let server: Server | undefined;

/** A server answering GET /v1/models with `body` (and 404 elsewhere). */
async function endpoint(status: number, body: unknown): Promise<string> {
  server = createServer((request, response) => {
    response.writeHead(request.url === "/v1/models" ? status : 404, { "content-type": "application/json" });
    response.end(JSON.stringify(body));
  });
  await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

afterEach(async () => {
  await new Promise((resolve) => server?.close(resolve) ?? resolve(undefined));
  server = undefined;
});

describe("the models an endpoint already running serves", () => {
  it("lists each model's name and aliases", async () => {
    const url = await endpoint(200, {
      object: "list",
      data: [],
      models: [
        { name: "demo", aliases: ["default"], any_name_accepted: false },
        { name: "demo-large", aliases: [], any_name_accepted: false },
      ],
    });
    expect(await servedModelNames(url)).toEqual(["demo", "default", "demo-large"]);
  });

  it("says nothing (every tier asked) when the endpoint takes any name, fails, or is not there", async () => {
    const any = await endpoint(200, { models: [{ name: "m", aliases: [], any_name_accepted: true }] });
    expect(await servedModelNames(any)).toBeUndefined();
    await new Promise((resolve) => server!.close(resolve));
    const failing = await endpoint(500, {});
    expect(await servedModelNames(failing)).toBeUndefined();
    await new Promise((resolve) => server!.close(resolve));
    server = undefined;
    expect(await servedModelNames(failing)).toBeUndefined();
  });
});
