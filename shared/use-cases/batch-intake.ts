/**
 * Batch intake: a file in the object store (`incoming/<policy>/[<batchId>/]<name>`) becomes a
 * batch. The object is streamed line by line through the one input reader (a line that is not
 * UTF-8, too long or a broken CSV record is refused by number and the rest is read), each line
 * validated with the pipeline's own item rules, tagged with the batch id, and sent to the batch lane's queue in batches of 10 with
 * retries; a repeated id is refused by a conditional write in the table (not a set in memory),
 * and refused lines are streamed, in line order, with their line numbers and reasons into a file
 * next to the batch's files, so memory stays flat whatever the file's size. Running it again on the same file (a redelivered S3 notification, a restart of the
 * local mode half-way) sends the same items again, which the decide path never decides twice,
 * and sets the same counts: nothing is lost and nothing counted twice.
 */
import { createHash } from "node:crypto";
import { BATCH_ID_PATTERN, type BatchRecord, NO_COUNTS } from "../domain/batch.ts";
import { formatOf, type ItemText, type RefusedLine, readItemLines } from "../domain/input/item-lines.ts";
import { parseItem } from "../domain/item.ts";
import type { MessageQueue } from "../domain/message-queue.ts";
import type { ObjectStore } from "../domain/object-store.ts";
import type { PolicyRegistry } from "../domain/policy/registry.ts";
import { BATCH_LANE } from "../domain/topology.ts";
import { type BatchDependencies, batchKeys, requestIfDue } from "./batch-progress.ts";
import { sendItems } from "./publish/send-items.ts";

/** Where batch files arrive. */
export const INCOMING_PREFIX = "incoming/";

/** What intake needs. */
export interface IntakeDependencies extends BatchDependencies {
  /** Where the file is read from and the refused lines written. */
  readonly objects: ObjectStore;
  readonly policies: PolicyRegistry;
  /** The batch lane's queue. */
  readonly queue: MessageQueue;
}

/** The batch a file's key stands for: its policy, and its id (from the key, or a hash of it). */
export function batchOfKey(key: string, etag = ""): { policyId: string; batchId: string; name: string } {
  const parts = key.slice(INCOMING_PREFIX.length).split("/");
  if (!key.startsWith(INCOMING_PREFIX) || parts.length < 2)
    throw new RangeError(`${key}: batch files go under ${INCOMING_PREFIX}<policy>/[<batch id>/]<file>`);
  const [policyId, ...rest] = parts;
  const named = rest.length > 1 && BATCH_ID_PATTERN.test(rest[0]!) ? rest[0]! : undefined;
  const batchId = named ?? `b-${createHash("sha256").update(`${key}|${etag}`).digest("hex").slice(0, 20)}`;
  return { policyId: policyId!, batchId, name: rest.at(-1)! };
}

/** A progress callback: lines read so far. */
export type IntakeProgress = (read: { lines: number; accepted: number; rejected: number }) => void;

/** Reads `key` into the batch it names; returns the batch after intake. */
export async function runIntake(
  deps: IntakeDependencies,
  key: string,
  options: { etag?: string; onProgress?: IntakeProgress } = {},
): Promise<BatchRecord> {
  const { policyId, batchId, name } = batchOfKey(key, options.etag);
  const now = deps.now();
  const fresh: BatchRecord = {
    batchId,
    policyId,
    source: key,
    status: "submitting",
    counts: NO_COUNTS,
    createdAt: now.toISOString(),
  };
  await deps.batches.createBatch(fresh); // false on a rerun: the batch exists, intake runs again
  const stream = await deps.objects.read(key);
  if (!stream) throw new RangeError(`${key}: no such object`);
  const counts = { lines: 0, accepted: 0, rejected: 0 };
  const run = {
    deps,
    batchId,
    policyId,
    counts,
    ...(options.onProgress ? { onProgress: options.onProgress } : {}),
  };
  // The whole read runs as the refused-lines file is written: it is never held in memory.
  await deps.objects.putStream(
    batchKeys(batchId).rejected,
    refusedLines(run, readItemLines(stream, formatOf(name))),
  );
  const batch = await deps.batches.finishIntake(batchId, counts, deps.now());
  options.onProgress?.({ ...counts });
  // A batch whose every line was refused (or whose items were all decided during a rerun) is done now.
  await requestIfDue(deps, batch);
  return (await deps.batches.getBatch(batchId)) ?? batch;
}

/** One intake run: the file's batch and what its lines have done so far. */
interface IntakeRun {
  readonly deps: IntakeDependencies;
  readonly batchId: string;
  readonly policyId: string;
  readonly counts: { lines: number; accepted: number; rejected: number };
  readonly onProgress?: IntakeProgress;
}

/** A refused line's problems. */
type Problems = readonly { field: string; message: string }[];

/**
 * Reads the file's lines, sends the accepted items a group at a time, and yields the refused
 * lines in line order. A repeat is known only once its group is checked, so refusals wait for
 * their group; a group is checked early once `BATCH_LANE.refusedLinesHeld` refusals wait, which
 * bounds what is held between two groups.
 */
async function* refusedLines(
  run: IntakeRun,
  source: AsyncIterable<ItemText | RefusedLine>,
): AsyncGenerator<string> {
  const { deps, batchId, counts } = run;
  const refused: { line: number; text: string }[] = [];
  let pending: { line: number; id: string; body: string }[] = [];
  const refuse = (line: number, problems: Problems, id?: string) => {
    counts.rejected++;
    const named = id === undefined ? {} : { id };
    refused.push({ line, text: JSON.stringify({ line, ...named, stage: "intake", problems }) });
  };
  const flush = async () => {
    if (pending.length === 0) return;
    const sending = await firstLines(deps, batchId, pending, refuse);
    counts.accepted += sending.length;
    if (sending.length > 0) await sendItems(sending, { kind: "queue", queue: deps.queue });
    pending = [];
    run.onProgress?.({ ...counts });
  };
  const written = () => {
    const text = refused
      .sort((a, b) => a.line - b.line)
      .map((r) => `${r.text}\n`)
      .join("");
    refused.length = 0;
    return text;
  };
  for await (const entry of source) {
    counts.lines++;
    const { line } = entry;
    const item = entry.problems ? { problems: entry.problems } : itemOfLine(run, entry.body);
    if ("problems" in item) refuse(line, item.problems, entry.problems ? undefined : idOfLine(entry.body));
    else pending.push({ line, ...item });
    if (pending.length === BATCH_LANE.sendBatch || refused.length >= BATCH_LANE.refusedLinesHeld)
      await flush();
    // With no group open, every refusal so far comes before any later line's.
    if (pending.length === 0 && refused.length > 0) yield written();
  }
  await flush();
  if (refused.length > 0) yield written();
}

/** The line as an item of the batch (its id and JSON), or why it is refused. */
function itemOfLine(run: IntakeRun, body: string): { id: string; body: string } | { problems: Problems } {
  const known = (id: string) => run.deps.policies.current(id) !== undefined;
  if (!known(run.policyId))
    return {
      problems: [{ field: "policy", message: `unknown policy "${run.policyId}" (from the file's folder)` }],
    };
  const withPolicy = withBatch(body, run.policyId, run.batchId);
  if (typeof withPolicy !== "string") return { problems: [withPolicy] };
  const parsed = parseItem(withPolicy, known);
  if (!parsed.ok) return { problems: parsed.problems };
  return { id: parsed.item.id, body: JSON.stringify(parsed.item) };
}

/**
 * The lines of a group whose id no other line of the file holds: each id is recorded with its line
 * by a conditional write (a rerun of the same file finds its own lines); a repeat within the
 * group is caught before the writes, so the earlier line always wins.
 */
async function firstLines(
  deps: IntakeDependencies,
  batchId: string,
  group: readonly { line: number; id: string; body: string }[],
  refuse: (line: number, problems: Problems, id?: string) => void,
): Promise<{ line: number; id: string; body: string }[]> {
  const firstInGroup = new Map<string, number>();
  for (const entry of group) if (!firstInGroup.has(entry.id)) firstInGroup.set(entry.id, entry.line);
  const holders = await Promise.all(
    group.map((entry) =>
      firstInGroup.get(entry.id) === entry.line
        ? deps.batches.claimLine(batchId, entry.id, entry.line)
        : firstInGroup.get(entry.id)!,
    ),
  );
  return group.filter((entry, i) => {
    if (holders[i] === entry.line) return true;
    refuse(entry.line, [{ field: "id", message: `"${entry.id}" repeats line ${holders[i]}` }], entry.id);
    return false;
  });
}

/** Longest id a refused line's entry in the errors file repeats (a longer one is left out). */
const MAX_SHOWN_ID = 256;

/**
 * The id a refused line names, for the errors file, so that the line can be found by the key its
 * sender knows: any string under `id`, even one the item rules refuse; none when the line is not
 * a JSON object or has no string id.
 */
function idOfLine(body: string): string | undefined {
  try {
    const id = (JSON.parse(body) as { id?: unknown } | null)?.id;
    return typeof id === "string" && id !== "" && id.length <= MAX_SHOWN_ID ? id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * The line's item with the batch's id added and the batch's policy filled in; a problem when the
 * line names another policy or is not a JSON object (the item rules report everything else).
 */
function withBatch(
  body: string,
  policyId: string,
  batchId: string,
): string | { field: string; message: string } {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return body; // parseItem names the JSON problem
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return body;
  const item = value as Record<string, unknown>;
  if (item.policy !== undefined && item.policy !== policyId)
    return {
      field: "policy",
      message: `"${String(item.policy)}" differs from the batch's policy "${policyId}"`,
    };
  return JSON.stringify({ ...item, policy: policyId, batchId });
}
