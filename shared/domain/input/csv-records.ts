/**
 * CSV records from the lines of {@link readLines}: a record is one line, or several while a
 * quoted field is open (an odd number of quotes so far), never more than the line limit. A
 * record that does not parse (a quote not closed, text after a closing quote) is refused with the
 * number of its first line, and the lines after that first one are read again as records of
 * their own, so one stray quote costs one line, not the rest of the file.
 */
import { parse } from "csv-parse/sync";
import { type InputLine, type LineError, type LineText, MAX_LINE_BYTES } from "./lines.ts";

/** A CSV record: the number of its first line and its fields. */
export interface CsvRecord {
  readonly line: number;
  readonly fields: readonly string[];
  readonly error?: undefined;
}

/** Options of {@link readCsvRecords}. */
export interface CsvOptions {
  /** Longest record accepted, in bytes. @default MAX_LINE_BYTES */
  readonly maxRecordBytes?: number;
}

/** Reads the records of CSV `lines`; blank lines outside a quoted field are skipped. */
export async function* readCsvRecords(
  lines: AsyncIterable<InputLine>,
  options: CsvOptions = {},
): AsyncGenerator<CsvRecord | LineError> {
  const limit = options.maxRecordBytes ?? MAX_LINE_BYTES;
  const source = lines[Symbol.asyncIterator]();
  // Lines to read again after a refused record, before the source's next ones: a stack, the
  // next one to read last.
  const again: InputLine[] = [];
  let pending: LineText[] = [];
  let bytes = 0;
  let quotes = 0;
  const restart = (from: InputLine[]): void => {
    for (let i = from.length - 1; i >= 0; i--) again.push(from[i]!);
    pending = [];
    bytes = 0;
    quotes = 0;
  };
  for (;;) {
    const next = again.pop() ?? (await source.next()).value;
    if (next === undefined) {
      if (pending.length === 0) return;
      yield refused(pending[0]!, "a quoted field is not closed by the end of the file");
      restart(pending.slice(1));
      continue;
    }
    if (next.error !== undefined) {
      if (pending.length > 0) {
        yield refused(pending[0]!, `a quoted field is not closed before line ${next.line}`);
        restart([...pending.slice(1), next]);
        continue;
      }
      yield next;
      continue;
    }
    if (pending.length === 0 && next.text.trim() === "") continue;
    pending.push(next);
    bytes += Buffer.byteLength(next.text) + 1;
    quotes += countQuotes(next.text);
    if (quotes % 2 === 0) {
      const record = recordOf(pending);
      const tail = pending.slice(1);
      restart([]);
      yield record;
      if (record.error !== undefined) restart(tail);
    } else if (bytes > limit) {
      yield refused(pending[0]!, `a quoted field is not closed within ${limit} bytes`);
      restart(pending.slice(1));
    }
  }
}

function refused(line: LineText, reason: string): LineError {
  return { line: line.line, error: `CSV: ${reason}` };
}

function countQuotes(text: string): number {
  let count = 0;
  for (let at = text.indexOf('"'); at >= 0; at = text.indexOf('"', at + 1)) count++;
  return count;
}

/** The record the complete `lines` hold, parsed by csv-parse (by a split when nothing is quoted). */
function recordOf(lines: readonly LineText[]): CsvRecord | LineError {
  const text = lines.map((l) => l.text).join("\n");
  const first = lines[0]!;
  if (!text.includes('"')) return { line: first.line, fields: text.split(",") };
  try {
    const records = parse(text, { relax_column_count: true }) as string[][];
    if (records.length !== 1) return refused(first, `holds ${records.length} records where one was expected`);
    return { line: first.line, fields: records[0]! };
  } catch (error) {
    return refused(first, csvProblem(error));
  }
}

/** csv-parse's error in words that say how to fix it (its own line numbers are the record's). */
function csvProblem(error: unknown): string {
  const { code, message } = error as { code?: string; message?: string };
  if (code === "CSV_INVALID_CLOSING_QUOTE" || code === "CSV_NON_TRIMABLE_CHAR_AFTER_CLOSING_QUOTE")
    return 'a quoted field goes on after its closing quote (inside quotes, write a quote as "")';
  if (code === "INVALID_OPENING_QUOTE")
    return 'a quote inside an unquoted field (quote the whole field and write the quote as "")';
  if (code === "CSV_QUOTE_NOT_CLOSED") return "a quoted field is not closed";
  return (message ?? String(error)).replace(/ at line \d+/g, "");
}
