/**
 * `decide calibrate` scoring labelled states on a running endpoint, as it would on the deployed
 * one: through `--url` (System One over HTTP) and `--endpoint-name` (the SageMaker runtime client,
 * pointed at the real runtime's `/endpoints/{name}/invocations`), with the same logits as the
 * in-process scorer; and a run whose endpoint goes away half-way stops with what to do, then
 * resumes from its file without sending the scored rows again.
 */

import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningServer } from "../../endpoint/server/server.ts";
import { runDecide } from "../helpers/decide-cli.ts";
import { startTestEndpoint } from "../helpers/endpoint.ts";
import { generatedModel } from "../helpers/models.ts";

const LABELS = ["billing", "technical", "account", "out_of_scope"];
const ROWS = 24;

let server: RunningServer;
let dir: string;
let input: string;
/** A proxy that forwards `budget` requests to the endpoint, then answers 503 to everything. */
let proxy: Server;
let proxyUrl: string;
let forwarded = 0;
let budget = 0;

beforeAll(async () => {
  server = await startTestEndpoint();
  dir = await mkdtemp(join(tmpdir(), "calibrate-remote-"));
  input = join(dir, "states.jsonl");
  const rows = Array.from({ length: ROWS }, (_, i) => ({
    id: `S-${i}`,
    label: LABELS[i % 4],
    state: `ticket ${i}: ${["invoice charged twice", "app crashes", "cannot log in", "nice weather"][i % 4]}`,
  }));
  await writeFile(input, rows.map((r) => JSON.stringify(r)).join("\n"));
  proxy = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on("data", (c: Buffer) => chunks.push(c));
    request.on("end", () => {
      if (forwarded >= budget) {
        response.writeHead(503, { "content-type": "application/json" }).end('{"error":"gone"}');
        return;
      }
      forwarded++;
      fetch(`${server.url}${request.url}`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: Buffer.concat(chunks),
      })
        .then(async (answer) =>
          response.writeHead(answer.status, { "content-type": "application/json" }).end(await answer.text()),
        )
        .catch((error: Error) => response.writeHead(502).end(error.message));
    });
  });
  await new Promise<void>((resolve) => proxy.listen(0, "127.0.0.1", resolve));
  proxyUrl = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => proxy?.close(resolve));
  await server?.close();
});

/** The logits of the resume file, in scoring order. */
async function scoredLogits(file: string): Promise<number[][]> {
  return (await readFile(file, "utf8"))
    .split("\n")
    .filter(Boolean)
    .map((line) => (JSON.parse(line) as { logits: number[] }).logits);
}

const calibrate = (args: string[], env: NodeJS.ProcessEnv = {}) =>
  runDecide(["calibrate", "--input", input, "--policy", "ticket-routing", ...args], env);

describe("decide calibrate against an endpoint", () => {
  it("scores through --url and --endpoint-name with the logits the in-process scorer gets", async () => {
    const local = await calibrate(["--model", await generatedModel(), "--out", join(dir, "local")]);
    expect(local.code, local.stderr).toBe(0);
    const viaUrl = await calibrate([
      "--url",
      server.url,
      "--out",
      join(dir, "url"),
      "--max-auto-error",
      "0.05",
    ]);
    expect(viaUrl.code, viaUrl.stderr).toBe(0);
    expect(viaUrl.stderr).toMatch(new RegExp(`scored ${ROWS}/${ROWS} \\(`));
    const viaSageMaker = await calibrate(
      ["--endpoint-name", "decisions", "--region", "us-east-1", "--out", join(dir, "sm")],
      {
        AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME: server.url,
        AWS_ACCESS_KEY_ID: "local",
        AWS_SECRET_ACCESS_KEY: "local",
      },
    );
    expect(viaSageMaker.code, viaSageMaker.stderr).toBe(0);
    const summaries = await Promise.all(
      ["local", "url", "sm"].map(async (d) =>
        JSON.parse(await readFile(join(dir, d, "ticket-routing.summary.json"), "utf8")),
      ),
    );
    for (const summary of summaries) {
      expect(summary.labels).toBe(ROWS);
      // Never worse than the policy as it stands, out of fold (24 labels once proposed a worse fit).
      expect(summary.calibrated.nll).toBeLessThanOrEqual(summary.current.nll);
    }
    // The certificate names the model file and prompt layout the endpoint scored with.
    const certificate = summaries[1].proposedPolicy.certificate;
    expect(certificate.modelSha256).toMatch(/^[0-9a-f]{64}$/);
    expect(certificate.promptVersion).toEqual(expect.any(String));
    // Remote scoring runs several requests at once: compare by row, not by file order.
    const byKey = async (d: string) => {
      const lines = (await readFile(join(dir, d, "ticket-routing.scored.jsonl"), "utf8"))
        .split("\n")
        .filter(Boolean);
      return new Map(
        lines.map((l) => JSON.parse(l) as { key: string; logits: number[] }).map((r) => [r.key, r.logits]),
      );
    };
    const [a, b, c] = await Promise.all(["local", "url", "sm"].map(byKey));
    expect(a!.size).toBe(ROWS);
    for (const [key, logits] of a!) {
      for (const other of [b!, c!]) {
        const remote = other.get(key);
        expect(remote, key).toBeDefined();
        for (const [k, value] of logits.entries()) expect(Math.abs(value - remote![k]!)).toBeLessThan(1e-4);
      }
    }
  });

  it("stops with what to do when the endpoint goes away, and resumes without sending scored rows again", async () => {
    const out = join(dir, "resume");
    budget = 10;
    forwarded = 0;
    const stopped = await calibrate(["--url", proxyUrl, "--concurrency", "2", "--out", out]);
    expect(stopped.code).toBe(1);
    expect(stopped.stderr).toMatch(/stopped after 10 of 24 rows: .*503/);
    expect(stopped.stderr).toMatch(/Run the same command again to resume/);
    expect(stopped.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(await scoredLogits(join(out, "ticket-routing.scored.jsonl"))).toHaveLength(10);

    budget = Number.POSITIVE_INFINITY;
    forwarded = 0;
    const resumed = await calibrate(["--url", proxyUrl, "--out", out]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toMatch(/resuming: 10 of 24 rows already scored/);
    expect(forwarded).toBe(14);
    const summary = JSON.parse(await readFile(join(out, "ticket-routing.summary.json"), "utf8"));
    expect(summary.labels).toBe(ROWS);
  });

  it("refuses two sources at once, and a source that is not a URL, with the usage", async () => {
    const both = await calibrate(["--url", server.url, "--endpoint-name", "x"]);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/give one of --model, --endpoint-name and --url, not endpoint-name and url/);
    const bad = await calibrate(["--url", "ftp://example.com"]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--url: .*only http and https/);
  });
});
