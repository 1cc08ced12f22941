/**
 * `npm run bench:cost`: cost per 1,000 decisions from measured times. Measures, on the generated
 * Qwen2-0.5B-shaped model in Q8_0 and Q4_0 (made to answer "A" or "B", so the allowed-token mass
 * takes a real answer's path), the time per decision for three workloads (one fresh
 * ~200-token decision; items under a cached ~300-token policy preamble; 21 yes/no questions on one
 * state, per question), then prices them with the assumptions in infra/capacity/prices.ts: cost per
 * 1,000 decisions and idle cost per month for real-time instances and serverless memory sizes,
 * and the monthly volume at which serverless stops being cheaper. GPU rows stay unmeasured.
 *
 * The Q8_0 times per fresh item and per item under a cached preamble go to
 * shared/domain/topology/measured-times.json, where the capacity model (`decide capacity`) and
 * the topology's sizing read them, unless --dry-run.
 *
 * The load average is printed beside the figures; on a machine busier than --max-load (1-minute load
 * average, default 2.5, read before and after each quantization) the file is not written: wall
 * times there measure the other tenants, not the model.
 *
 * Flags: --threads N (default: the host default), --items N (default 20), --max-load L, --dry-run.
 */
import { writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { DecisionModel } from "../../endpoint/runtime/decision-model.ts";
import { hostThreads } from "../../endpoint/runtime/host-cores.ts";
import { DecisionScorer } from "../../endpoint/scorer/scorer.ts";
import { MEASURED_TIMES_PATH, measuredTimesJson } from "../../infra/capacity/measured-times.ts";
import { HOURS_PER_MONTH, REALTIME_INSTANCES, SERVERLESS } from "../../infra/capacity/prices.ts";
import { decisionRequest, type KeyedQuestion } from "../helpers/decision-requests.ts";
import { REPO_ROOT } from "../helpers/models.ts";
import { benchModelPath, loadLine, machineLine, median, timed, words } from "./bench-helpers.ts";

const { values: flags } = parseArgs({
  options: {
    threads: { type: "string" },
    items: { type: "string", default: "20" },
    "max-load": { type: "string", default: "2.5" },
    "dry-run": { type: "boolean", default: false },
  },
});
const host = hostThreads();
const threads = flags.threads ? Number(flags.threads) : host.threads;
const items = Number(flags.items);
console.log(
  `\n# cost benchmark: qwen2-0.5b shape, ${threads} threads (${flags.threads ? "--threads" : host.reason})`,
);
console.log(machineLine());
/** The 1-minute load averages read at each checkpoint (also printed); the file is written only under --max-load. */
const loads: number[] = [];
const noteLoad = (when: string) => {
  loads.push(loadavg()[0]!);
  console.log(`${when}: ${loadLine()}`);
};
noteLoad("start");

const team: KeyedQuestion = {
  key: "team",
  type: "choice",
  instructions: `Which team should handle this ticket? ${words(40, 5)}`,
  options: [
    { id: "billing", description: "Billing: charges, invoices, refunds" },
    { id: "technical", description: "Technical: errors, crashes, bugs" },
    { id: "account", description: "Account: login, password, profile" },
    { id: "none", description: "None of these" },
  ],
};
const preambleQuestion: KeyedQuestion = {
  ...team,
  instructions: `Which team should handle this ticket? ${words(260, 11)}`,
};

/** Milliseconds per decision for the three workloads on one quantization. */
async function measure(type: "Q8_0" | "Q4_0") {
  // A model that answers "A" or "B", as one that answers the question does: the mass then takes
  // the path real answers take (a random model's top token is no letter, bench-helpers.ts).
  const modelPath = await benchModelPath("qwen2-0.5b", type, { answersWithLetters: true });
  const model = await DecisionModel.load({ modelPath, threads });
  const scorer = await DecisionScorer.create(model, { contextSize: 4096, prefixSlots: 1 });
  try {
    // 1. One fresh decision of about 200 tokens.
    await scorer.score(decisionRequest({ state: words(150, 1), questions: [team] }), { reuse: false });
    const fresh: number[] = [];
    for (let i = 0; i < 5; i++)
      fresh.push(
        await timed(() =>
          scorer.score(decisionRequest({ state: words(150, i + 2), questions: [team] }), { reuse: false }),
        ),
      );
    // 2. Items under a cached ~300-token preamble (policy-first): the first item fills the cache.
    await scorer.score(
      decisionRequest({ state: words(30, 99), questions: [preambleQuestion], layout: "policy-first" }),
      { reuse: false },
    );
    const cached: number[] = [];
    // Beside each, another item read out by its letters alone ("token_mass": false, the fast path
    // a request may choose): interleaved, so both see the same machine.
    const lettersOnly: number[] = [];
    const item = (seed: number, tokenMass?: boolean) =>
      decisionRequest({
        state: words(30, seed),
        questions: [preambleQuestion],
        layout: "policy-first",
        ...(tokenMass === undefined ? {} : { tokenMass }),
      });
    for (let i = 0; i < items; i++) {
      cached.push(await timed(() => scorer.score(item(i * 3))));
      lettersOnly.push(await timed(() => scorer.score(item(i * 3 + 1, false))));
    }
    // 3. 21 yes/no questions on one ~1,000-token state (state-first, the state evaluated once and
    // reused by every question): per question.
    const questions = Array.from({ length: 21 }, (_, i) => ({
      key: `q${i}`,
      type: "noul" as const,
      instructions: `Is the item about ${words(3, i * 5)}?`,
    }));
    const state = words(1000, 7);
    await scorer.clearCache();
    const perQuestion =
      (await timed(() => scorer.score(decisionRequest({ state, questions })))) / questions.length;
    // 4. Generation (the chat route): 32 tokens after a short prompt, greedy, per token.
    const prompt = scorer.promptTokens({ system: "Answer.", user: words(40, 3) });
    let generated = 0;
    let firstAt = 0;
    let lastAt = 0;
    await scorer.clearCache();
    await scorer.withSequence(prompt, async (sequence) => {
      for await (const _ of sequence.generate(prompt, { temperature: 0, topK: 0 }, false)) {
        lastAt = performance.now();
        if (++generated === 1) firstAt = lastAt;
        if (generated >= 32) break;
      }
    });
    // Per generated token after the first (the first carries the prompt's prefill).
    const generationMs = generated > 1 ? ((lastAt - firstAt) / (generated - 1)) * generated : 0;
    return {
      type,
      freshMs: median(fresh),
      cachedMs: median(cached),
      lettersOnlyMs: median(lettersOnly),
      questionMs: perQuestion,
      tokenMs: generationMs / Math.max(1, generated),
    };
  } finally {
    await scorer.dispose();
    await model.dispose();
  }
}

const q8Result = await measure("Q8_0");
noteLoad("after Q8_0");
const q4Result = await measure("Q4_0");
noteLoad("after Q4_0");
const results = [q8Result, q4Result];
console.log("\nmeasured (median ms per decision on this machine):");
console.log(
  "quant  fresh 200-token  cached preamble  same, letters only  21 questions (per question)  generation (per token after the first)",
);
for (const r of results)
  console.log(
    `${r.type.padEnd(7)}${r.freshMs.toFixed(0).padStart(15)}${r.cachedMs.toFixed(0).padStart(17)}${r.lettersOnlyMs.toFixed(0).padStart(20)}${r.questionMs.toFixed(0).padStart(29)}${r.tokenMs.toFixed(0).padStart(40)}`,
  );

const dollars = (x: number) =>
  x >= 100 ? `$${x.toFixed(0)}` : x >= 1 ? `$${x.toFixed(2)}` : `$${x.toFixed(4)}`;
console.log("\ncost per 1,000 decisions, fully busy (prices: infra/capacity/prices.ts)");
console.log(
  "| deployment | idle per month | Q8_0 fresh | Q8_0 cached preamble | Q8_0 per question of 21 | Q4_0 fresh | Q4_0 cached preamble |",
);
console.log("|---|---|---|---|---|---|---|");
const q8 = results[0]!;
const q4 = results[1]!;
const lettersOnlyLines: string[] = [];
for (const instance of REALTIME_INSTANCES) {
  // Decision time scales with physical cores against the 2 measured here (an assumption).
  const perThousand = (ms: number) =>
    ((ms * (2 / instance.physicalCores) * 1000) / 3_600_000) * instance.dollarsPerHour;
  lettersOnlyLines.push(
    `  ${instance.name}: Q8_0 ${dollars(perThousand(q8.lettersOnlyMs))}, Q4_0 ${dollars(perThousand(q4.lettersOnlyMs))} per 1,000 items under a cached preamble with "token_mass": false`,
  );
  console.log(
    `| real-time ${instance.name} (${instance.physicalCores} core${instance.physicalCores > 1 ? "s" : ""}, $${instance.dollarsPerHour}/h) | ${dollars(instance.dollarsPerHour * HOURS_PER_MONTH)} | ${dollars(perThousand(q8.freshMs))} | ${dollars(perThousand(q8.cachedMs))} | ${dollars(perThousand(q8.questionMs))} | ${dollars(perThousand(q4.freshMs))} | ${dollars(perThousand(q4.cachedMs))} |`,
  );
}
const serverlessPerThousand = (ms: number, size: (typeof SERVERLESS.memorySizes)[number]) =>
  (ms / size.speedVsBench / 1000) * (size.memoryMiB / 1024) * SERVERLESS.dollarsPerGbSecond * 1000 +
  ((SERVERLESS.bytesPerDecision * 1000) / 1e9) * SERVERLESS.dollarsPerGbProcessed;
for (const size of SERVERLESS.memorySizes)
  console.log(
    `| serverless ${size.memoryMiB} MB | $0 | ${dollars(serverlessPerThousand(q8.freshMs, size))} | ${dollars(serverlessPerThousand(q8.cachedMs, size))} | ${dollars(serverlessPerThousand(q8.questionMs, size))} | ${dollars(serverlessPerThousand(q4.freshMs, size))} | ${dollars(serverlessPerThousand(q4.cachedMs, size))} |`,
  );
console.log(
  "| real-time ml.g5.xlarge (GPU) | unmeasured | unmeasured | unmeasured | unmeasured | unmeasured | unmeasured |",
);
console.log('\nthe same items read out by their letters alone ("token_mass": false, no allowed-token mass):');
console.log(lettersOnlyLines.join("\n"));

// Break-even: the monthly volume at which serverless costs what one always-on instance does.
const smallest = REALTIME_INSTANCES.find((i) => i.name === "ml.c6i.xlarge")!;
const monthly = smallest.dollarsPerHour * HOURS_PER_MONTH;
console.log(`\nbreak-even against one ${smallest.name} running all month (${dollars(monthly)}):`);
for (const size of SERVERLESS.memorySizes) {
  const fresh = (monthly / serverlessPerThousand(q8.freshMs, size)) * 1000;
  const cached = (monthly / serverlessPerThousand(q8.cachedMs, size)) * 1000;
  console.log(
    `  serverless ${size.memoryMiB} MB, Q8_0: ${Math.round(fresh).toLocaleString("en")} fresh decisions a month (${Math.round(fresh / 30).toLocaleString("en")} a day), ${Math.round(cached).toLocaleString("en")} with a cached preamble`,
  );
}
const capacity = (3_600_000 / q8.freshMs) * HOURS_PER_MONTH;
console.log(
  `  (one ${smallest.name} decides at most ${Math.round(capacity).toLocaleString("en")} fresh decisions a month)`,
);

// The per-item times the capacity model runs on: Q8_0 (the image's default), on this machine's cores.
const reference = REALTIME_INSTANCES.find((i) => i.physicalCores === threads);
const times = measuredTimesJson({
  source: `npm run bench:cost on ${new Date().toISOString().slice(0, 10)}: ${machineLine()}, threads ${threads}, 1-minute load average at most ${Math.max(...loads).toFixed(2)}, generated Qwen2-0.5B shape, median of 5 fresh and ${items} cached`,
  referenceInstance: reference?.name ?? `none with ${threads} physical cores`,
  referencePhysicalCores: threads,
  quantization: "Q8_0",
  secondsPerItem: { fresh: q8.freshMs / 1000, preambleCached: q8.cachedMs / 1000 },
});
const maxLoad = Number(flags["max-load"]);
if (flags["dry-run"])
  console.log(`\n--dry-run: ${MEASURED_TIMES_PATH} not written; it would hold:\n${times}`);
else if (Math.max(...loads) > maxLoad)
  console.log(
    `\nload average reached ${Math.max(...loads).toFixed(2)} (over --max-load ${maxLoad}): ${MEASURED_TIMES_PATH} not written; it would hold:\n${times}`,
  );
else {
  writeFileSync(join(REPO_ROOT, MEASURED_TIMES_PATH), times);
  console.log(`\nwrote ${MEASURED_TIMES_PATH} (the capacity model's per-item times)`);
}
