/**
 * Items from an input file, JSON lines or CSV, as the JSON text each line stands for: the one
 * reader behind `decide publish`, `decide batch submit` and the batch intake function. CSV needs a
 * header naming `id` and `state` (`policy` optional); other columns become metadata, empty cells
 * are left out. Lines that cannot become an item text are refused with their numbers and the
 * problem; the item rules themselves (`parseItem`) are the caller's next step.
 */
import type { ItemProblem } from "../item.ts";
import { readCsvRecords } from "./csv-records.ts";
import { readLines } from "./lines.ts";

/** An input format. */
export const INPUT_FORMATS = ["jsonl", "csv"] as const;

/** One of {@link INPUT_FORMATS}. */
export type InputFormat = (typeof INPUT_FORMATS)[number];

/** A line that holds an item's JSON text (not validated yet). */
export interface ItemText {
  readonly line: number;
  readonly body: string;
  readonly problems?: undefined;
}

/** A line refused before it became an item. */
export interface RefusedLine {
  readonly line: number;
  readonly problems: readonly ItemProblem[];
}

/** The field a refusal of the line itself names (not valid UTF-8, too long, a CSV quote). */
export const LINE_FIELD = "line";

/** The format a file name implies: CSV for `.csv`, JSON lines otherwise. */
export function formatOf(name: string): InputFormat {
  return name.toLowerCase().endsWith(".csv") ? "csv" : "jsonl";
}

/** Reads `source` as `format`; blank lines are skipped. */
export async function* readItemLines(
  source: AsyncIterable<Uint8Array | string>,
  format: InputFormat,
): AsyncGenerator<ItemText | RefusedLine> {
  if (format === "jsonl") {
    for await (const line of readLines(source)) {
      if (line.error !== undefined) yield lineRefused(line.line, line.error);
      else if (line.text.trim() !== "") yield { line: line.line, body: line.text };
    }
    return;
  }
  let header: string[] | undefined;
  for await (const record of readCsvRecords(readLines(source))) {
    if (record.error !== undefined) {
      yield lineRefused(record.line, record.error);
      continue;
    }
    if (header === undefined) {
      header = record.fields.map((name) => name.trim());
      const problem = headerProblem(header);
      if (problem) {
        // Without its header no line of the file can be read: one refusal says why.
        yield lineRefused(record.line, problem);
        return;
      }
      continue;
    }
    yield rowItem(record.line, record.fields, header);
  }
}

function lineRefused(line: number, message: string): RefusedLine {
  return { line, problems: [{ field: LINE_FIELD, message }] };
}

/** What keeps a CSV header from being read: a required column missing, a name empty or repeated. */
function headerProblem(header: readonly string[]): string | undefined {
  const named = `it names ${header.map((name) => JSON.stringify(name)).join(", ")}`;
  for (const required of ["id", "state"])
    if (!header.includes(required))
      return `the CSV header has no "${required}" column (${named}); the header needs id and state, policy is optional`;
  if (header.some((name) => name === "")) return `the CSV header has an empty column name (${named})`;
  const repeated = header.find((name, i) => header.indexOf(name) !== i);
  if (repeated !== undefined) return `the CSV header names "${repeated}" twice`;
  return undefined;
}

/** A CSV row as item text: id, policy and state by name, other non-empty cells as metadata. */
function rowItem(line: number, fields: readonly string[], header: readonly string[]): ItemText | RefusedLine {
  const where = `the row has ${fields.length} fields, the header ${header.length} (${header.join(", ")})`;
  if (fields.length > header.length)
    return lineRefused(line, `CSV: ${where}; quote a field that holds a comma`);
  const cells = new Map(header.map((name, i) => [name, fields[i]]));
  const missing = ["id", "state", ...(header.includes("policy") ? ["policy"] : [])].filter(
    (name) => cells.get(name) === undefined,
  );
  if (missing.length > 0)
    return { line, problems: missing.map((field) => ({ field, message: `is missing: ${where}` })) };
  const metadata = Object.fromEntries(
    header
      .filter((name) => !["id", "policy", "state"].includes(name))
      .map((name) => [name, cells.get(name)])
      .filter(([, value]) => value !== undefined && value !== ""),
  );
  const policy = cells.get("policy");
  return {
    line,
    body: JSON.stringify({
      id: cells.get("id"),
      ...(policy ? { policy } : {}),
      state: cells.get("state"),
      ...(Object.keys(metadata).length > 0 ? { metadata } : {}),
    }),
  };
}
