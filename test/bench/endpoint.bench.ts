/**
 * Endpoint benchmark (`npm run bench:endpoint`): the real server on loopback, on the generated
 * Qwen2-0.5B-shaped model.
 *
 * Prints, in one run: 21 yes/no questions about one state in one /v1/systemone request against
 * the same 21 questions asked through /v1/chat/completions for a compact JSON array; one
 * 4-option choice against the same question as a chat completion with a short JSON answer; HTTP
 * overhead per request against calling the scorer in-process; decisions/s with 1, 2 and 4
 * concurrent clients. Each comparison starts from a state the cache has not seen.
 *
 * The generated model has random weights, so its chat output is not JSON: the chat side is given
 * exactly as many tokens as the expected compact answer takes in this tokenizer (max_tokens) and
 * the printed completion-token count shows what it really generated.
 *
 * Flags: --shape qwen2-0.5b|tiny (default qwen2-0.5b), --threads N (default 2), --blocks N (default 2),
 * --gpu off|auto|cuda (default off).
 */
import { parseArgs } from "node:util";
import { Logger } from "@aws-lambda-powertools/logger";
import { SageMakerRuntimeClient } from "@aws-sdk/client-sagemaker-runtime";
import { isModelShapeName } from "../../endpoint/models/shapes.ts";
import { resolveServerConfig } from "../../endpoint/server/config.ts";
import { startServer } from "../../endpoint/server/server.ts";
import { BatchingDecisionEndpoint } from "../../shared/adapters/batching-endpoint.ts";
import { SageMakerDecisionEndpoint } from "../../shared/adapters/decision-endpoint.ts";
import { parsePolicy } from "../../shared/domain/policy/policy.ts";
import { ENDPOINT_BATCHING, ENDPOINT_CALLS } from "../../shared/domain/topology.ts";
import { decisionRequest } from "../helpers/decision-requests.ts";
import { benchModelPath, fmt, machineLine, median, timed, words } from "./bench-helpers.ts";

const { values: flags } = parseArgs({
  options: {
    shape: { type: "string", default: "qwen2-0.5b" },
    threads: { type: "string", default: "2" },
    blocks: { type: "string", default: "2" },
    gpu: { type: "string", default: "off" },
  },
});
const shapeName = flags.shape!;
if (!isModelShapeName(shapeName)) throw new Error(`unknown shape ${shapeName}`);
const blocks = Number(flags.blocks);

const server = await startServer(
  resolveServerConfig(
    {
      model: await benchModelPath(shapeName),
      port: "0",
      threads: flags.threads,
      gpu: "off",
      "context-size": "4096",
    },
    {},
  ),
  { logger: new Logger({ serviceName: "bench", logLevel: "SILENT" }) },
);
await server.service.ready;
const scorer = server.service.scorer!;
const model = scorer.model.model;

console.log(
  `\n# endpoint benchmark: ${shapeName}, ${flags.threads} threads, ${blocks} blocks, gpu ${String(scorer.model.gpu)}`,
);
console.log(machineLine());

async function post(path: string, body: unknown): Promise<Record<string, unknown>> {
  const response = await fetch(`${server.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const json = (await response.json()) as Record<string, unknown>;
  if (response.status !== 200) throw new Error(`${path}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}

const tokensOf = (text: string) => model.tokenize(text).length;
let stateCounter = 0;
/** A state of about `count` tokens that the cache has not seen. */
const freshState = (count: number) => `${++stateCounter} ${words(count, stateCounter * 13)}`;

// 1. 21 yes/no questions about one state: System One against chat with a JSON array.
{
  const topics = Array.from({ length: 21 }, (_, i) => words(2, i * 11 + 3));
  const questions = topics.map((topic) => `Does the text mention ${topic}?`);
  const compactAnswer = JSON.stringify(topics.map((_, i) => i % 3 === 0));
  const maxTokens = tokensOf(compactAnswer);
  const systemOneMs: number[] = [];
  const chatMs: number[] = [];
  let chatUsage: Record<string, number> = {};
  let systemOneTokens = 0;
  for (let b = 0; b < blocks; b++) {
    const stateA = freshState(300);
    systemOneMs.push(
      await timed(async () => {
        const body = await post("/v1/systemone", {
          state: stateA,
          questions: Object.fromEntries(
            questions.map((q, i) => [`q${i}`, { type: "noul", instructions: q }]),
          ),
          token_mass: false,
        });
        systemOneTokens = (body.x_detail as { evaluated_tokens: number }).evaluated_tokens;
      }),
    );
    const stateB = freshState(300);
    chatMs.push(
      await timed(async () => {
        const body = await post("/v1/chat/completions", {
          messages: [
            {
              role: "system",
              content:
                "Answer each question about the text with true or false. Reply with a compact JSON array only.",
            },
            { role: "user", content: JSON.stringify({ text: stateB, questions }) },
          ],
          temperature: 0,
          max_tokens: maxTokens,
        });
        chatUsage = body.usage as Record<string, number>;
      }),
    );
  }
  console.log("\n1. 21 yes/no questions about one ~300-token state (medians, each from an unseen state):");
  console.log(
    `   /v1/systemone, one request: ${fmt(median(systemOneMs))} (${systemOneTokens} tokens evaluated, no token generated)`,
  );
  console.log(
    `   /v1/chat/completions, JSON array: ${fmt(median(chatMs))} (${chatUsage.prompt_tokens} prompt tokens, ` +
      `${chatUsage.completion_tokens} generated of max ${maxTokens} = tokens of ${compactAnswer.length}-char ${JSON.stringify(compactAnswer.slice(0, 24))}...)`,
  );
  console.log(`   ratio chat / systemone: ${(median(chatMs) / median(systemOneMs)).toFixed(2)}x`);
}

// 2. One 4-option choice against a chat completion with a short JSON answer.
{
  const criteria = {
    billing: "Billing: charges, invoices, refunds",
    technical: "Technical: errors, crashes, bugs",
    account: "Account: login, password, profile",
    out_of_scope: "None of these",
  };
  const shortAnswer = JSON.stringify({ team: "technical" });
  const maxTokens = tokensOf(shortAnswer);
  const systemOneMs: number[] = [];
  const chatMs: number[] = [];
  for (let b = 0; b < blocks * 2; b++) {
    const stateA = freshState(120);
    systemOneMs.push(
      await timed(() =>
        post("/v1/systemone", {
          state: stateA,
          questions: {
            team: { type: "choice", instructions: "Which team should handle this ticket?", criteria },
          },
          token_mass: false,
        }),
      ),
    );
    const stateB = freshState(120);
    chatMs.push(
      await timed(() =>
        post("/v1/chat/completions", {
          messages: [
            { role: "system", content: 'Route the ticket. Reply with JSON like {"team":"billing"} only.' },
            { role: "user", content: JSON.stringify({ ticket: stateB, teams: criteria }) },
          ],
          temperature: 0,
          max_tokens: maxTokens,
        }),
      ),
    );
  }
  console.log(`\n2. one 4-option choice about a ~120-token ticket (medians of ${systemOneMs.length}):`);
  console.log(`   /v1/systemone: ${fmt(median(systemOneMs))}`);
  console.log(`   /v1/chat/completions, ${maxTokens} tokens of ${shortAnswer}: ${fmt(median(chatMs))}`);
  console.log(`   ratio chat / systemone: ${(median(chatMs) / median(systemOneMs)).toFixed(2)}x`);
}

// 3. HTTP overhead: the same cached decision in-process and over HTTP (only the last token is evaluated).
{
  const state = freshState(60);
  const question = { type: "noul", instructions: "Is this about billing?" } as const;
  await scorer.score(decisionRequest({ state, questions: [{ key: "q", ...question }], tokenMass: false }));
  const inProcess: number[] = [];
  const overHttp: number[] = [];
  for (let i = 0; i < 10 * blocks; i++) {
    inProcess.push(
      await timed(() =>
        scorer.score(decisionRequest({ state, questions: [{ key: "q", ...question }], tokenMass: false })),
      ),
    );
    overHttp.push(
      await timed(() => post("/v1/systemone", { state, questions: { q: question }, token_mass: false })),
    );
  }
  const difference = median(overHttp) - median(inProcess);
  console.log(`\n3. HTTP overhead (same cached decision, medians of ${inProcess.length}):`);
  console.log(
    `   in-process scorer: ${fmt(median(inProcess))}; over HTTP: ${fmt(median(overHttp))}; overhead ${fmt(difference)} per request`,
  );
}

// 4. Decisions per second with 1, 2 and 4 concurrent clients, each sending its own items.
{
  const perLevel = 8;
  console.log(`\n4. throughput, ${perLevel} one-question choice decisions per level, ~80-token items:`);
  for (const clients of [1, 2, 4]) {
    const items = Array.from({ length: perLevel }, () => freshState(80));
    const elapsed = await timed(() =>
      Promise.all(
        Array.from({ length: clients }, async (_, c) => {
          for (let i = c; i < items.length; i += clients) {
            await post("/v1/systemone", {
              state: items[i],
              questions: {
                team: {
                  type: "choice",
                  instructions: "Which team?",
                  criteria: { billing: "Billing", technical: "Technical", account: "Account" },
                },
              },
              layout: "policy-first",
              token_mass: false,
            });
          }
        }),
      ),
    );
    console.log(
      `   ${clients} client(s): ${((perLevel / elapsed) * 1000).toFixed(2)} decisions/s (${fmt(elapsed / perLevel)} each)`,
    );
  }
}

// 5. Ten items of one SQS batch through the SageMaker runtime client: one batched InvokeEndpoint
// against ten single calls sent at once (as the decide function's parallel records do).
{
  process.env.AWS_ENDPOINT_URL_SAGEMAKER_RUNTIME = server.url;
  const client = new SageMakerRuntimeClient({
    region: "us-east-1",
    credentials: { accessKeyId: "local", secretAccessKey: "local" },
    maxAttempts: 1,
  });
  const tickets = parsePolicy({
    id: "tickets",
    version: 1,
    question: `Which team should handle this ticket? ${words(200, 17)}`,
    type: "choice",
    options: [
      { id: "billing", description: "Billing", automate: true },
      { id: "technical", description: "Technical", automate: true },
      { id: "account", description: "Account", automate: true },
    ],
    autoThreshold: 0.9,
    layout: "policy-first",
  });
  const batch = () =>
    Array.from({ length: 10 }, (_, i) => ({ id: `B${i}`, policy: "tickets", state: freshState(60) }));
  const single = new SageMakerDecisionEndpoint(client, "bench", {
    ...ENDPOINT_CALLS,
    attempts: 1,
    timeoutMs: 600_000,
  });
  const batching = new BatchingDecisionEndpoint(client, "bench", {
    ...ENDPOINT_CALLS,
    ...ENDPOINT_BATCHING,
    attempts: 1,
    timeoutMs: 600_000,
  });
  const singles: number[] = [];
  const batched: number[] = [];
  await Promise.all(batch().map((item) => single.decide(item as never, tickets))); // warm the preamble
  for (let b = 0; b < blocks; b++) {
    singles.push(
      await timed(() => Promise.all(batch().map((item) => single.decide(item as never, tickets)))),
    );
    batched.push(
      await timed(() => Promise.all(batch().map((item) => batching.decide(item as never, tickets)))),
    );
  }
  console.log(`\n5. ten items of one SQS batch via SageMakerRuntimeClient (medians of ${blocks}):`);
  console.log(`   ten single InvokeEndpoint calls at once: ${fmt(median(singles))}`);
  console.log(
    `   one batched call (${batching.stats.calls / blocks} call per batch): ${fmt(median(batched))}: ${(median(singles) / median(batched)).toFixed(2)}x`,
  );
  client.destroy();
}

console.log(`\npeak memory (max RSS): ${(process.resourceUsage().maxRSS / 2 ** 20).toFixed(2)} GiB`);
await server.close();
