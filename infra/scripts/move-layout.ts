/**
 * The layout half of `move-files.ts`: the import rules and the Layout table of
 * docs/development.md brought up to the moved tree. The presentation room gets its rule and its
 * row, each new sub-folder is named in its folder's row, and every rule cell is written again from
 * `import-rules.ts`. Each edit checks first whether it is already done, so a second run changes
 * nothing; a phrase it was told to change but cannot find is reported, not guessed.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { ImportRule } from "./import-rules.ts";

const DOMAIN_PACKAGES = '["@aws-sdk/", "hono", "@middy/", "@aws-lambda-powertools/"]';

/** The presentation room's rule, written into import-rules.ts before `shared/adapters`. */
const REPORTS_RULE = `  "shared/reports": { may: ["shared/domain"], forbiddenPackages: ${DOMAIN_PACKAGES} },\n`;

/** Folders that may now import the presentation room. */
const MAY_IMPORT_REPORTS = ["shared/use-cases", "shared/pages"];

/** `text` of import-rules.ts with `extra` added to the `may` list of `folder`'s rule. */
export function addMay(text: string, folder: string, extra: string): string {
  const key = text.indexOf(`"${folder}": {`);
  if (key < 0) throw new Error(`import-rules.ts: no rule for ${folder}`);
  const open = text.indexOf("may: [", key) + "may: [".length;
  const close = text.indexOf("]", open);
  const list = text.slice(open, close);
  if (list.includes(`"${extra}"`)) return text;
  return `${text.slice(0, open)}${list ? `${list}, ` : ""}"${extra}"${text.slice(close)}`;
}

/** The import rules with the presentation room; unchanged when it is there already. */
export function withReportsRule(text: string): string {
  let out = text;
  if (!out.includes('"shared/reports"')) {
    const at = out.indexOf('  "shared/adapters":');
    if (at < 0) throw new Error("import-rules.ts: no shared/adapters rule to put shared/reports before");
    out = out.slice(0, at) + REPORTS_RULE + out.slice(at);
  }
  for (const folder of MAY_IMPORT_REPORTS) out = addMay(out, folder, "shared/reports");
  return out;
}

/** A row to add to the Layout table after the row of `after`. */
const NEW_ROWS = [
  {
    after: "shared/domain",
    folder: "shared/reports",
    holds:
      "presentation, pure and apart from the domain: the calibration report (one HTML page with inline SVG plots: `calibration-report.ts` and its sections `calibration-report-*.ts`), the what-if report (`what-if-report.ts`), the audit estimate in words and as an HTML section (`audit-text.ts`), the reports' look (`report-style.ts`) and the certificate bench's table (`certificate-bench.ts`, figures from `npm run bench:certificate`)",
  },
];

/** A note for a folder's "holds" cell, added unless every name it gives is already there. */
const HOLDS_NOTES: { folder: string; names: string[]; note: string }[] = [
  {
    folder: "cli",
    names: ["calibrate/", "batch/", "capacity/", "what-if/"],
    note: "; a command of several modules has a sub-folder: `calibrate/` (fit, plan, check, apply, print), `batch/`, `capacity/`, `what-if/`",
  },
  {
    folder: "shared/domain",
    names: ["calibration/certificate/"],
    note: "; `calibration/certificate/` holds the certificate: its exact bounds and fixed-sequence test, the cascade's, its checks and recomputation, certification samples and label plans",
  },
  {
    folder: "shared/use-cases",
    names: ["async/", "review/", "what-if/"],
    note: "; sub-folders `async/` (the async lane's submit, results, answers and failures), `review/` (reviews, labels and their revisions, the backlog), `what-if/`",
  },
  {
    folder: "shared/adapters",
    names: ["dynamodb/", "in-memory/"],
    note: "; `dynamodb/` holds the DynamoDB side (the decisions table's schema and index keys, the stores, table admin), `in-memory/` the in-memory stores",
  },
  {
    folder: "infra/capacity",
    names: ["simulation/", "template/"],
    note: "; `simulation/` holds the simulators and their event heap, `template/` the template reader",
  },
  {
    folder: "infra/constructs",
    names: ["endpoint/", "async/", "operations/"],
    note: "; sub-folders `endpoint/` (the real-time endpoint: names, role, scaling, instance types, serverless settings, deployment guardrail, prober, tier models), `async/` (the async lane and its endpoint), `operations/` (alarm topic and alarms, dashboard, metrics)",
  },
  {
    folder: "functions",
    names: ["support/"],
    note: "; `support/` holds what the handlers share: clients, settings read from the environment, the dependencies they build, the SQS batch and event-queue wrappers, lazy start-up, tracing",
  },
  {
    folder: "cli",
    names: ["terminal/"],
    note: "; `terminal/` holds what a command shows on a terminal: progress lines, notices for slow steps, start-up and intake progress",
  },
  {
    folder: "shared/domain",
    names: ["async/", "review/", "backoff/"],
    note: "; `async/` holds the async lane's objects and notifications, `review/` reviews and gold items, `backoff/` the retry and overload schedules",
  },
  {
    folder: "shared/use-cases",
    names: ["calibration/"],
    note: "; `calibration/` holds proposing a calibration, the certification sample and its registered plan, re-scoring later tiers and checking a certificate's labels (gold items and near-duplicate marks are in `review/`)",
  },
  {
    folder: "infra/local",
    names: ["dynamodb/", "sqs/"],
    note: "; `dynamodb/` holds DynamoDB Local and its loopback, `sqs/` the local SQS server, its persistence and the SQS poller",
  },
];

/** Phrases of the guides that the moves make untrue, and what they become: [file, from, to]. */
const PHRASES: [string, string, string][] = [
  ["docs/development.md", ", the HTML report writers)", ")"],
  ["docs/development.md", "`what-if/` (sample, comparison, report)", "`what-if/` (sample, comparison)"],
  [
    "docs/development.md",
    "(`audit/`: bands, estimate, verdict, their text)",
    "(`audit/`: bands, estimate, verdict)",
  ],
  [
    "docs/architecture.md",
    "Calibration (`shared/domain/calibration/`, pure)",
    "Calibration (`shared/domain/calibration/`, pure; the certificate in its `certificate/` sub-folder, the report in `shared/reports/`)",
  ],
  [
    "docs/architecture.md",
    "`report.ts` (and `report-plots.ts`)",
    "`shared/reports/calibration-report.ts` (and `calibration-report-plots.ts`)",
  ],
  [
    "docs/architecture.md",
    "is imported), the review pages",
    "is imported), the reports (`shared/reports/`: what the tool shows as HTML, SVG and words, pure, importing only the domain), the review pages",
  ],
  [
    "test/unit/import-rules.test.ts",
    "(shared/use-cases/ may import shared/domain)",
    "(shared/use-cases/ may import shared/domain, shared/reports)",
  ],
];

/** `text` of `file` with its phrases changed; a phrase neither there nor done is reported. */
export function withPhrases(file: string, text: string): string {
  let out = text;
  for (const [where, from, to] of PHRASES.filter(([f]) => f === file))
    if (out.includes(from)) out = out.replace(from, to);
    else if (!out.includes(to)) console.warn(`move-layout: ${where} no longer says "${from}"`);
  return out;
}

/** The rows of a Layout table line: first cell's single folder, holds, rule. */
function cellsOf(line: string): { folder: string | undefined; cells: string[] } | undefined {
  if (!line.startsWith("| `")) return undefined;
  const cells = line.split(" | ");
  const single = /^\| `([^`]+)\/`$/.exec(cells[0]!);
  return { folder: single?.[1], cells };
}

/** The Layout section of the guide brought up to the rules and the new folders. */
export function withLayoutRows(
  guide: string,
  rules: Readonly<Record<string, ImportRule>>,
  describe: (rule: ImportRule) => string,
): string {
  const lines = withPhrases("docs/development.md", guide).split("\n");
  for (const row of NEW_ROWS) {
    if (lines.some((line) => cellsOf(line)?.folder === row.folder)) continue;
    const at = lines.findIndex((line) => cellsOf(line)?.folder === row.after);
    if (at < 0) throw new Error(`docs/development.md: no Layout row for ${row.after}/`);
    lines.splice(at + 1, 0, `| \`${row.folder}/\` | ${row.holds} |  |`);
  }
  return lines
    .map((line) => {
      const row = cellsOf(line);
      if (!row?.folder || !(row.folder in rules)) return line;
      const [first, holds = ""] = row.cells;
      // Every note of the folder, each added unless all its names are there already.
      const held = HOLDS_NOTES.filter((n) => n.folder === row.folder).reduce(
        (text, note) => (note.names.every((name) => text.includes(`\`${name}`)) ? text : text + note.note),
        holds,
      );
      return `${first} | ${held} | ${describe(rules[row.folder]!)} |`;
    })
    .join("\n");
}

/** Writes `path` under `root` when `edit` changes it; whether it did. */
function editFile(root: string, path: string, edit: (text: string) => string): boolean {
  const before = readFileSync(join(root, path), "utf8");
  const after = edit(before);
  if (after !== before) writeFileSync(join(root, path), after);
  return after !== before;
}

/** Applies the rules and the table to the tree at `root`; the paths it changed. */
export async function applyLayout(root: string): Promise<string[]> {
  const changed: string[] = [];
  const rulesPath = "infra/scripts/import-rules.ts";
  if (editFile(root, rulesPath, withReportsRule)) changed.push(rulesPath);
  const url = `${pathToFileURL(join(root, rulesPath)).href}?at=${Date.now()}`;
  const module = (await import(url)) as {
    IMPORT_RULES: Record<string, ImportRule>;
    describeRule: (rule: ImportRule) => string;
  };
  const guide = "docs/development.md";
  if (editFile(root, guide, (text) => withLayoutRows(text, module.IMPORT_RULES, module.describeRule)))
    changed.push(guide);
  for (const file of ["docs/architecture.md", "test/unit/import-rules.test.ts"])
    if (editFile(root, file, (text) => withPhrases(file, text))) changed.push(file);
  return changed;
}
