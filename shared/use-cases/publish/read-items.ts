/**
 * Reading items for batch publishing: the input file's lines (JSON lines or CSV, through the one
 * input reader), each validated with the pipeline's own item rules; refused lines come back with
 * their line numbers and problems, and a repeated id refuses the later line.
 */
import { type InputFormat, type RefusedLine, readItemLines } from "../../domain/input/item-lines.ts";
import { parseItem } from "../../domain/item.ts";

export type { RefusedLine } from "../../domain/input/item-lines.ts";

/** A line that can be sent. */
export interface PublishableItem {
  readonly line: number;
  readonly id: string;
  /** The message body: the item as JSON. */
  readonly body: string;
}

/** Reads and validates every line of `source`. */
export async function readItems(
  source: AsyncIterable<Uint8Array | string>,
  format: InputFormat,
  knownPolicy: (id: string) => boolean,
): Promise<{ items: PublishableItem[]; rejected: RefusedLine[] }> {
  const items: PublishableItem[] = [];
  const rejected: RefusedLine[] = [];
  const seen = new Map<string, number>();
  for await (const entry of readItemLines(source, format)) {
    if (entry.problems) {
      rejected.push(entry);
      continue;
    }
    const { line } = entry;
    const parsed = parseItem(entry.body, knownPolicy);
    if (!parsed.ok) {
      rejected.push({ line, problems: parsed.problems });
      continue;
    }
    const first = seen.get(parsed.item.id);
    if (first !== undefined) {
      rejected.push({
        line,
        problems: [{ field: "id", message: `"${parsed.item.id}" repeats line ${first}` }],
      });
      continue;
    }
    seen.set(parsed.item.id, line);
    items.push({ line, id: parsed.item.id, body: JSON.stringify(parsed.item) });
  }
  return { items, rejected };
}
