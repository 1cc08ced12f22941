/**
 * Reading items for batch publishing: JSON lines or CSV (header `id,policy,state`, extra columns
 * become metadata), each line validated with the pipeline's own item rules, problems reported with
 * their line numbers.
 */
import { parse as parseCsv } from "csv-parse/sync";
import { type ItemProblem, parseItem } from "../../domain/item.ts";

/** A line that can be sent. */
export interface PublishableItem {
  readonly line: number;
  readonly id: string;
  /** The message body: the item as JSON. */
  readonly body: string;
}

/** A line that cannot. */
export interface RejectedLine {
  readonly line: number;
  readonly problems: ItemProblem[];
}

/** Reads and validates every line. */
export function readItems(
  text: string,
  format: "jsonl" | "csv",
  knownPolicy: (id: string) => boolean,
): { items: PublishableItem[]; rejected: RejectedLine[] } {
  const items: PublishableItem[] = [];
  const rejected: RejectedLine[] = [];
  const seen = new Map<string, number>();
  const accept = (line: number, body: string) => {
    const parsed = parseItem(body, knownPolicy);
    if (!parsed.ok) {
      rejected.push({ line, problems: parsed.problems });
      return;
    }
    const first = seen.get(parsed.item.id);
    if (first !== undefined) {
      rejected.push({
        line,
        problems: [{ field: "id", message: `"${parsed.item.id}" repeats line ${first}` }],
      });
      return;
    }
    seen.set(parsed.item.id, line);
    items.push({ line, id: parsed.item.id, body: JSON.stringify(parsed.item) });
  };
  if (format === "jsonl") {
    text.split("\n").forEach((raw, i) => {
      if (raw.trim()) accept(i + 1, raw);
    });
    return { items, rejected };
  }
  const records = parseCsv(text, {
    columns: true,
    skip_empty_lines: true,
    relax_column_count: true,
    info: true,
  }) as {
    record: Record<string, string>;
    info: { lines: number };
  }[];
  for (const { record, info } of records) {
    const { id, policy, state, ...rest } = record;
    const metadata = Object.fromEntries(
      Object.entries(rest).filter(([, value]) => value !== undefined && value !== ""),
    );
    accept(
      info.lines,
      JSON.stringify({ id, policy, state, ...(Object.keys(metadata).length ? { metadata } : {}) }),
    );
  }
  return { items, rejected };
}
