/**
 * Items from input files (`shared/domain/input/item-lines.ts` on the CSV records of
 * `csv-records.ts`): a stray quote costs its own line and the rest of the file is read, a
 * byte-order mark does not hide the header, short and long rows say what is missing, and any
 * CSV text at all yields items or line refusals, never an exception.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { type ItemText, type RefusedLine, readItemLines } from "../../shared/domain/input/item-lines.ts";

async function read(text: string | Buffer, format: "jsonl" | "csv" = "csv") {
  const out: (ItemText | RefusedLine)[] = [];
  async function* source() {
    yield typeof text === "string" ? Buffer.from(text) : text;
  }
  for await (const entry of readItemLines(source(), format)) out.push(entry);
  return out;
}

const item = (entry: ItemText | RefusedLine) =>
  entry.problems ? undefined : (JSON.parse(entry.body) as Record<string, unknown>);

describe("items from CSV", () => {
  it("refuses the line of an unclosed quote and reads the lines after it", async () => {
    const out = await read(
      "id,policy,state,channel\n" +
        'NC-C1,ticket-routing,"Charged twice, please refund",web\n' +
        'NC-C5,ticket-routing,"unterminated quote,web\n' +
        "NC-C6,ticket-routing,app crashes,web\n",
    );
    expect(out.map((e) => e.line)).toEqual([2, 3, 4]);
    expect(item(out[0]!)).toEqual({
      id: "NC-C1",
      policy: "ticket-routing",
      state: "Charged twice, please refund",
      metadata: { channel: "web" },
    });
    expect(out[1]).toEqual({
      line: 3,
      problems: [{ field: "line", message: "CSV: a quoted field is not closed by the end of the file" }],
    });
    expect(item(out[2]!)).toMatchObject({ id: "NC-C6", state: "app crashes" });
  });

  it("reads quoted commas, doubled quotes and a field over several lines; names a bad closing quote", async () => {
    const out = await read(
      'id,state\r\nA-1,"she said ""hi"", then left"\r\nA-2,"two\r\n\r\nparagraphs"\r\nA-3,"closed" late\r\nA-4,ok\r\n',
    );
    expect(out.map((e) => e.line)).toEqual([2, 3, 6, 7]);
    expect(item(out[0]!)).toEqual({ id: "A-1", state: 'she said "hi", then left' });
    expect(item(out[1]!)).toEqual({ id: "A-2", state: "two\n\nparagraphs" });
    expect(out[2]!.problems![0]!.message).toMatch(/quoted field goes on after its closing quote/);
    expect(item(out[3]!)).toEqual({ id: "A-4", state: "ok" });
  });

  it("reads the header behind a byte-order mark, and refuses a header without id or state once", async () => {
    const marked = await read(
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from("id,state\nB-1,hi\n")]),
    );
    expect(marked.map(item)).toEqual([{ id: "B-1", state: "hi" }]);
    const noState = await read("id,text\nB-1,hi\nB-2,ho\n");
    expect(noState).toEqual([
      {
        line: 1,
        problems: [
          {
            field: "line",
            message:
              'the CSV header has no "state" column (it names "id", "text"); the header needs id and state, policy is optional',
          },
        ],
      },
    ]);
  });

  it("says which column a short row lacks and refuses a row with more fields than the header", async () => {
    const out = await read(
      "id,policy,state,channel\nS-2,ticket-routing\nS-3,ticket-routing,hi\nS-4,p,a,b,c\n",
    );
    expect(out[0]).toEqual({
      line: 2,
      problems: [
        {
          field: "state",
          message: "is missing: the row has 2 fields, the header 4 (id, policy, state, channel)",
        },
      ],
    });
    expect(item(out[1]!)).toEqual({ id: "S-3", policy: "ticket-routing", state: "hi" });
    expect(out[2]!.problems![0]!.message).toMatch(/the row has 5 fields, the header 4 .*quote a field/);
  });

  it("refuses a quoted field that never closes within the limit and reads on after its line", async () => {
    const filler = Array.from({ length: 30_000 }, (_, i) => `F-${i},plain ${i}`).join("\n");
    const out = await read(`id,state\nQ-1,"open\n${filler}\n`);
    expect(out[0]).toMatchObject({
      line: 2,
      problems: [{ message: expect.stringMatching(/not closed within/) }],
    });
    expect(out).toHaveLength(30_001);
    expect(item(out[1]!)).toEqual({ id: "F-0", state: "plain 0" });
  });

  it("yields items or refusals for any CSV-ish text, never an exception, one per record at most", async () => {
    const text = fc
      .array(fc.oneof(fc.constantFrom('"', ",", "\n", "\r\n", "id", "state", "x", '""', " "), fc.string()), {
        maxLength: 60,
      })
      .map((parts) => `id,state\n${parts.join("")}`);
    await fc.assert(
      fc.asyncProperty(text, async (csv) => {
        const out = await read(csv);
        const lines = out.map((e) => e.line);
        expect([...lines].sort((a, b) => a - b)).toEqual(lines);
        expect(new Set(lines).size).toBe(lines.length);
        for (const entry of out) {
          if (entry.problems) expect(entry.problems.length).toBeGreaterThan(0);
          else expect(typeof JSON.parse(entry.body)).toBe("object");
        }
      }),
      { numRuns: 300 },
    );
  });
});

describe("items from JSON lines", () => {
  it("skips blank lines and refuses invalid UTF-8 by line", async () => {
    const out = await read(
      Buffer.concat([
        Buffer.from('{"id":"J-1"}\r\n\r\n'),
        Buffer.from([0xff]),
        Buffer.from('\n{"id":"J-2"}'),
      ]),
      "jsonl",
    );
    expect(out).toEqual([
      { line: 1, body: '{"id":"J-1"}' },
      { line: 3, problems: [{ field: "line", message: expect.stringMatching(/not valid UTF-8/) }] },
      { line: 4, body: '{"id":"J-2"}' },
    ]);
  });
});
