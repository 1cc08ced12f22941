/**
 * `decide local` (also `npm start`): the whole pipeline on this machine, fed with the sample
 * items, with a live summary; Ctrl-C stops everything cleanly. The database persists between
 * runs in .cache/local unless --fresh is given.
 */

import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import { startLocalMode } from "../infra/local/local-mode.ts";
import { LOCAL_SERVICES, type LocalService, resolveLocalPorts } from "../infra/local/ports.ts";
import { integerFlag } from "./args.ts";

export const localUsage = `decide local [--model file.gguf] [--fresh] [--no-samples] [--data-dir .cache/local]
             [--port-base N] [--port 8080] [--dynamodb-port 8000] [--sqs-port 9324] [--bus-port 9195] [--review-port 8090]

Starts the decision endpoint (--port), DynamoDB Local (needs Java 17), local SQS queues (intake,
batch, auto-action, review, rejected, and a dead-letter queue per source as deployed), the local event bus with the deployed rules, the
review page and the functions; sends the sample items from events/items/samples.jsonl and prints
a live summary. Ctrl-C stops it all.

--port-base N (or DECIDE_LOCAL_PORT_BASE) puts the endpoint, DynamoDB Local, SQS, the bus and the
review page at N..N+4 and keeps the data in .cache/local-N, so two instances run side by side.
Each port also reads a variable (a flag wins): ${Object.values(LOCAL_SERVICES)
  .map(({ flag, env }) => `${flag} ${env}`)
  .join(", ")}.
A port in use stops the start with one line naming the service and the flag that moves it.`;

/** Runs until SIGINT or SIGTERM; returns the exit code. */
export async function localCommand(argv: string[]): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      model: { type: "string" },
      fresh: { type: "boolean", default: false },
      "no-samples": { type: "boolean", default: false },
      port: { type: "string" },
      "port-base": { type: "string" },
      "dynamodb-port": { type: "string" },
      "sqs-port": { type: "string" },
      "bus-port": { type: "string" },
      "review-port": { type: "string" },
      "data-dir": { type: "string" },
    },
    strict: true,
  });
  const root = fileURLToPath(new URL("..", import.meta.url));
  const base = integerFlag(
    "port-base",
    values["port-base"] ?? process.env.DECIDE_LOCAL_PORT_BASE,
    undefined,
    1024,
    65530,
  );
  // A flag wins over its environment variable (LOCAL_SERVICES names both for each service).
  const overrides = Object.fromEntries(
    (Object.keys(LOCAL_SERVICES) as LocalService[]).map((service) => {
      const { flag, env } = LOCAL_SERVICES[service];
      const name = flag.slice(2) as "port" | "dynamodb-port" | "sqs-port" | "bus-port" | "review-port";
      return [service, integerFlag(name, values[name] ?? process.env[env], undefined, 0, 65535)];
    }),
  );
  const local = await startLocalMode({
    root,
    // A second instance (--port-base) keeps its data apart from the first.
    dataDir: values["data-dir"] ?? join(root, ".cache", base === undefined ? "local" : `local-${base}`),
    fresh: values.fresh ?? false,
    ...(values.model ? { model: values.model } : {}),
    ports: resolveLocalPorts(
      base,
      Object.fromEntries(Object.entries(overrides).filter(([, value]) => value !== undefined)),
    ),
    say: (line) => console.log(line),
  });
  const exports = [
    "AWS_REGION",
    "AWS_ACCESS_KEY_ID",
    "AWS_SECRET_ACCESS_KEY",
    "AWS_ENDPOINT_URL_DYNAMODB",
    "AWS_ENDPOINT_URL_SQS",
    "AWS_ENDPOINT_URL_EVENTBRIDGE",
    "DECISIONS_TABLE",
    "EVENT_BUS_NAME",
    "INTAKE_QUEUE_URL",
    "DLQ_URL",
    "REVIEW_QUEUE_URL",
    "BATCH_QUEUE_URL",
    "BATCH_FILES_QUEUE_URL",
    "BATCH_FOLDER",
    "DEAD_LETTER_ROUTES",
  ]
    // JSON (the routes) needs quoting for the shell; the URLs and names hold no single quote.
    .map(
      (name) =>
        `export ${name}=${/^[\w:/.@-]*$/.test(local.env[name] ?? "") ? local.env[name] : `'${local.env[name]}'`}`,
    )
    .join("\n");
  const before = await local.summary();
  // What to do next comes last, where it stays on screen.
  console.log(
    [
      "",
      "In another terminal, to look or to send more:",
      exports,
      'npx decide publish events/items/samples.jsonl --queue-url "$INTAKE_QUEUE_URL"',
      "npx decide batch submit events/items/moderation-batch.jsonl --policy content-moderation",
      "",
      `Review page: ${local.reviewUrl}`,
      "Status:      npx decide status (after the exports above)",
      "Replay:      npx decide replay --from intake --dry-run (or review, batch, auto-action, human-rule, ...)",
      "",
    ].join("\n"),
  );
  if (before.decided + before.rejected > 0) {
    console.log(
      `kept ${before.decided} decisions and ${before.rejected} rejections from earlier runs (--fresh starts empty)`,
    );
  }
  if (!values["no-samples"]) {
    const sent = await local.feedSamples();
    console.log(
      before.decided + before.rejected > 0
        ? `sent ${sent} sample items again; those already decided are not decided twice`
        : `sent ${sent} sample items`,
    );
  }

  let last = "";
  // The summary in progress, awaited before the services stop (it must not outlive them).
  let summarizing: Promise<void> = Promise.resolve();
  const timer = setInterval(() => {
    summarizing = local
      .summary()
      .then((s) => {
        const line = `decided ${s.decided} (auto ${s.auto}, human ${s.human}, reviewed ${s.reviewed}), rejected ${s.rejected}, waiting ${s.waiting}, in DLQ ${s.deadLetters}`;
        if (line !== last) console.log(line);
        last = line;
      })
      .catch((error: unknown) => console.error(`summary failed: ${(error as Error).message}`));
  }, 2000);
  await new Promise<void>((resolve) => {
    const stop = () => {
      process.off("SIGINT", stop);
      process.off("SIGTERM", stop);
      resolve();
    };
    process.on("SIGINT", stop);
    process.on("SIGTERM", stop);
  });
  clearInterval(timer);
  await summarizing;
  console.log("stopping...");
  await local.stop();
  console.log("stopped");
  return 0;
}
