/**
 * Reading items for batch publishing: the input file's lines (JSON lines or CSV, through the one
 * input reader), each validated with the pipeline's own item rules, yielded one at a time as they
 * are read (memory does not grow with the file); refused lines come with their line numbers and
 * problems, and a repeated id refuses the later line (the ids seen are the one thing kept).
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

/** One line read: an item to send, or a line refused. */
export type ReadItem = { readonly item: PublishableItem } | { readonly refused: RefusedLine };

/** Reads and validates the lines of `source`, one at a time. */
export async function* readItems(
  source: AsyncIterable<Uint8Array | string>,
  format: InputFormat,
  knownPolicy: (id: string) => boolean,
): AsyncGenerator<ReadItem> {
  const seen = new Map<string, number>();
  for await (const entry of readItemLines(source, format)) {
    if (entry.problems) {
      yield { refused: entry };
      continue;
    }
    const { line } = entry;
    const parsed = parseItem(entry.body, knownPolicy);
    if (!parsed.ok) {
      yield { refused: { line, problems: parsed.problems } };
      continue;
    }
    const first = seen.get(parsed.item.id);
    if (first !== undefined) {
      yield {
        refused: { line, problems: [{ field: "id", message: `"${parsed.item.id}" repeats line ${first}` }] },
      };
      continue;
    }
    seen.set(parsed.item.id, line);
    yield { item: { line, id: parsed.item.id, body: JSON.stringify(parsed.item) } };
  }
}
