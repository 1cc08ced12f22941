/**
 * Pipeline benchmark (`npm run bench:pipeline`): items per second end to end through the local
 * pipeline (local SQS → decide handler → real endpoint on the tiny model → DynamoDB Local →
 * local bus → auto-action), and the pipeline's own cost per item, measured against an endpoint
 * that answers instantly. Both phases run in one process on the same services.
 *
 * Flags: --items N (default 300), --pollers N (default 1).
 */

import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { parseArgs } from "node:util";
import { dynamoClient } from "../../functions/support/clients.ts";
import type { SystemOneRequest } from "../../shared/domain/contracts/system-one/index.ts";
import { type LocalPipeline, sendBodies, startLocalPipeline } from "../helpers/local-pipeline.ts";
import { answerFor, answerIdsOf } from "../helpers/system-one-answers.ts";
import { fmt, machineLine } from "./bench-helpers.ts";

const { values: flags } = parseArgs({
  options: { items: { type: "string", default: "300" }, pollers: { type: "string", default: "1" } },
});
const count = Number(flags.items);

let instant = false;
let realUrl = "";
/** Forwards to the real endpoint, or answers at once with a valid System One body. */
const switchServer = createServer(async (request, response) => {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  const body = Buffer.concat(chunks).toString("utf8");
  if (instant) {
    const answer = (request: SystemOneRequest) =>
      answerFor(
        request,
        answerIdsOf(request).map((_, i) => (i === 0 ? 0 : -3)),
      );
    const parsed = JSON.parse(body) as SystemOneRequest | { batch: SystemOneRequest[] };
    response.writeHead(200, { "content-type": "application/json" });
    response.end(
      JSON.stringify(
        "batch" in parsed
          ? { results: parsed.batch.map((r) => ({ status: 200, body: answer(r) })) }
          : answer(parsed),
      ),
    );
    return;
  }
  const upstream = await fetch(`${realUrl}${request.url}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body,
  });
  response.writeHead(upstream.status, { "content-type": "application/json" });
  response.end(Buffer.from(await upstream.arrayBuffer()));
});
await new Promise<void>((resolve) => switchServer.listen(0, "127.0.0.1", resolve));

const pipeline: LocalPipeline = await startLocalPipeline({
  pollers: Number(flags.pollers),
  endpointUrl: async (real) => {
    realUrl = real;
    return `http://127.0.0.1:${(switchServer.address() as AddressInfo).port}`;
  },
});

const policies = ["ticket-routing", "content-moderation", "pre-screen"];
const texts = [
  "My card was charged twice, please refund",
  "The app crashes when I open settings",
  "Free prize, click now",
  "Payslips and passport attached",
];
let batch = 0;

/** Sends `n` new items and waits until each has its "Decision Made" event; returns milliseconds. */
async function run(n: number): Promise<number> {
  batch++;
  const before = pipeline.bus.events.filter((e) => e["detail-type"] === "Decision Made").length;
  const bodies = Array.from({ length: n }, (_, i) =>
    JSON.stringify({
      id: `B${batch}-${i}`,
      policy: policies[i % policies.length],
      state: `${texts[i % texts.length]} (#${i})`,
    }),
  );
  const started = performance.now();
  await sendBodies(pipeline.intake, bodies);
  while (pipeline.bus.events.filter((e) => e["detail-type"] === "Decision Made").length < before + n) {
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const elapsed = performance.now() - started;
  await pipeline.bus.idle();
  return elapsed;
}

// Every DynamoDB request the in-process functions make, by command: the table round trips.
const roundTrips = new Map<string, number>();
dynamoClient(pipeline.env).middlewareStack.add(
  (next, context) => (args) => {
    const name = String((context as { commandName?: string }).commandName ?? "unknown").replace(
      /Command$/,
      "",
    );
    roundTrips.set(name, (roundTrips.get(name) ?? 0) + 1);
    return next(args);
  },
  { step: "initialize", name: "countRoundTrips" },
);

console.log(
  `\n# pipeline benchmark: ${count} items per phase, ${flags.pollers} poller(s), tiny model, local services`,
);
console.log(machineLine());
await run(30); // warm-up: JIT, connections, the policies' prompt prefixes
const real = await run(count);
instant = true;
await run(30);
roundTrips.clear();
const quick = await run(count);
const trips = [...roundTrips.values()].reduce((a, b) => a + b, 0);
console.log(
  `\nreal endpoint (tiny model): ${count} items in ${fmt(real)}: ${((count / real) * 1000).toFixed(1)} items/s, ${fmt(real / count)} per item`,
);
console.log(
  `instant endpoint: ${count} items in ${fmt(quick)}: ${((count / quick) * 1000).toFixed(1)} items/s, ${fmt(quick / count)} per item`,
);
console.log(
  `pipeline overhead per item (SQS, handler, DynamoDB, EventBridge, auto-action): ${fmt(quick / count)}`,
);
console.log(`endpoint share of the real run: ${(((real - quick) / real) * 100).toFixed(0)}%`);
console.log(
  `DynamoDB round trips per item (instant phase, decide and targets): ${(trips / count).toFixed(2)} (${[
    ...roundTrips,
  ]
    .map(([name, n]) => `${name} ${(n / count).toFixed(2)}`)
    .join(", ")})`,
);

await pipeline.stop();
switchServer.close();
