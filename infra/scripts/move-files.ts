/**
 * `node --import tsx infra/scripts/move-files.ts`: moves source files into sub-folders by rule
 * (issue 43, item 3) and keeps every reference to them true. Rules, not a list, so a file added
 * meanwhile follows its siblings: `git mv` each matching tracked file, rewrite every relative
 * module specifier (import, export, `import()`, `vi.mock(...)`, `new URL(..., import.meta.url)`,
 * read with the TypeScript parser) both in the moved files and to them, rewrite the repository
 * paths cited as text (docs, README, package.json, knip.json, comments, test names), then apply
 * the import rules and the Layout table's rows (move-layout.ts). Re-runnable: a second run finds
 * nothing to move and changes nothing. It stages only what it changed; commit that.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join, posix } from "node:path";
import ts from "typescript";
import { applyLayout } from "./move-layout.ts";

/** One rule: tracked files matching `from` (a glob: `*`, `{a,b}`) go to `to` (a folder ending in `/`). */
export interface MoveRule {
  readonly from: string;
  readonly to: string;
}

/** The moves, first match wins. */
export const MOVE_RULES: readonly MoveRule[] = [
  // Presentation (HTML, SVG, words, the bench's table) out of the pure domain, into a room of its own.
  { from: "shared/domain/calibration/report.ts", to: "shared/reports/calibration-report.ts" },
  { from: "shared/domain/calibration/report-style.ts", to: "shared/reports/" },
  { from: "shared/domain/calibration/report-*.ts", to: "shared/reports/calibration-report-*.ts" },
  { from: "shared/domain/calibration/certificate-bench.ts", to: "shared/reports/" },
  { from: "shared/domain/what-if/report.ts", to: "shared/reports/what-if-report.ts" },
  { from: "shared/domain/audit/audit-text.ts", to: "shared/reports/" },
  // Calibration: the certificate and its labels beside the fit.
  {
    from: "shared/domain/calibration/{binomial,weighted-bound,fixed-sequence,cascade-certificate,certifi*,label-*}.ts",
    to: "shared/domain/calibration/certificate/",
  },
  { from: "cli/calibrate{,-*}.ts", to: "cli/calibrate/" },
  { from: "cli/batch{,-*}.ts", to: "cli/batch/" },
  { from: "cli/capacity{,-*}.ts", to: "cli/capacity/" },
  { from: "cli/what-if{,-*}.ts", to: "cli/what-if/" },
  {
    from: "shared/adapters/{dynamodb-*,decisions-table,decision-index-keys}.ts",
    to: "shared/adapters/dynamodb/",
  },
  { from: "shared/adapters/in-memory-*.ts", to: "shared/adapters/in-memory/" },
  { from: "shared/use-cases/async-*.ts", to: "shared/use-cases/async/" },
  { from: "shared/use-cases/{review-*,reviewed-labels,revise-label}.ts", to: "shared/use-cases/review/" },
  { from: "shared/use-cases/what-if*.ts", to: "shared/use-cases/what-if/" },
  { from: "infra/constructs/async-*.ts", to: "infra/constructs/async/" },
  {
    from: "infra/constructs/{endpoint-*,decision-endpoint,instance-types,serverless-settings,deployment-guardrail,tier-models}.ts",
    to: "infra/constructs/endpoint/",
  },
  {
    from: "infra/constructs/{alarm-*,*-alarms,threshold-alarm,operations,pipeline-dashboard,pipeline-metrics}.ts",
    to: "infra/constructs/operations/",
  },
  { from: "infra/capacity/{*-sim,event-heap,min-heap}.ts", to: "infra/capacity/simulation/" },
  { from: "infra/capacity/template{,-*}.ts", to: "infra/capacity/template/" },
  { from: "infra/local/{dynamodb-*.ts,LoopbackDynamoDbLocal.java}", to: "infra/local/dynamodb/" },
  { from: "infra/local/sqs-*.ts", to: "infra/local/sqs/" },
  // functions/ keeps its Lambda handlers; what they share (clients, settings, wrappers) beside them.
  {
    from: "functions/{clients,config,dependencies,lazy,tracing,sqs-batch-handler,event-queue-handler}.ts",
    to: "functions/support/",
  },
  // The CLI's terminal output: progress lines, slow-step notices, what a terminal can show.
  { from: "cli/{terminal,slow-step,startup-progress,intake-progress}.ts", to: "cli/terminal/" },
  // The domain's smaller rooms: the async lane's objects and notifications, reviews and gold
  // items, retry schedules.
  { from: "shared/domain/async-{notification,objects}.ts", to: "shared/domain/async/" },
  { from: "shared/domain/review{,-gold}.ts", to: "shared/domain/review/" },
  { from: "shared/domain/{backoff,overload-backoff}.ts", to: "shared/domain/backoff/" },
  // Near-duplicate groups and the reviewers' plan serve the certificate's labels.
  {
    from: "shared/domain/calibration/{group-key,reviewer-plan}.ts",
    to: "shared/domain/calibration/certificate/",
  },
  // The use cases of calibration and certification; gold items and duplicates join the reviews.
  {
    from: "shared/use-cases/{certificate-labels,request-certification,rescore-later-tiers,propose-calibration,registered-certification}.ts",
    to: "shared/use-cases/calibration/",
  },
  { from: "shared/use-cases/{gold-answer,gold-items,mark-duplicate}.ts", to: "shared/use-cases/review/" },
];

/** A glob as a regular expression; each `*` is a group. */
function globRegExp(glob: string): RegExp {
  const body = glob
    .replace(/[.+^$()|[\]\\]/g, "\\$&")
    .replace(/\{([^}]*)\}/g, (_, alts: string) => `(?:${alts.split(",").join("|")})`)
    .replace(/\*/g, "([^/]*)");
  return new RegExp(`^${body}$`);
}

/** Where `path` goes under `rules`, or undefined when no rule takes it. */
export function destination(path: string, rules: readonly MoveRule[] = MOVE_RULES): string | undefined {
  for (const rule of rules) {
    const match = globRegExp(rule.from).exec(path);
    if (!match) continue;
    if (rule.to.endsWith("/")) return rule.to + posix.basename(path);
    const stars = match.slice(1).filter((s) => s !== undefined);
    return rule.to.replace(/\*/g, () => stars.shift() ?? "");
  }
  return undefined;
}

const CODE = /\.(ts|tsx|js|mjs|cjs)$/;
const TEXT =
  /\.(ts|tsx|js|mjs|cjs|java|md|json|jsonc|ya?ml|txt|sh)$|(^|\/)(Dockerfile[^/]*|\.dockerignore|\.gitignore)$|^\.ci\/run$/;
const SELF = ["infra/scripts/move-files.ts", "infra/scripts/move-layout.ts", "test/unit/move-files.test.ts"];

/** Whether a call's callee is one whose first argument is a module path (`vi.mock`, `require`...). */
function takesModulePath(call: ts.CallExpression): boolean {
  if (call.expression.kind === ts.SyntaxKind.ImportKeyword) return true;
  const callee = call.expression.getText();
  return /^(vi\.\w+|require|require\.resolve)$/.test(callee);
}

/** The string literals of a file that name a file by a path relative to it. */
export function pathLiterals(path: string, text: string): ts.StringLiteralLike[] {
  const source = ts.createSourceFile(path, text, ts.ScriptTarget.Latest, true);
  const found: ts.StringLiteralLike[] = [];
  const visit = (node: ts.Node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier) {
      if (ts.isStringLiteral(node.moduleSpecifier)) found.push(node.moduleSpecifier);
    } else if (ts.isImportTypeNode(node)) {
      const arg = node.argument;
      if (ts.isLiteralTypeNode(arg) && ts.isStringLiteral(arg.literal)) found.push(arg.literal);
    } else if (ts.isCallExpression(node) && takesModulePath(node)) {
      const first = node.arguments[0];
      if (first && ts.isStringLiteralLike(first)) found.push(first);
    } else if (ts.isNewExpression(node) && node.expression.getText() === "URL") {
      const [first, base] = node.arguments ?? [];
      if (first && base?.getText() === "import.meta.url" && ts.isStringLiteralLike(first)) found.push(first);
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found.filter(
    (literal) => !/^[a-z][a-z0-9+.-]*:/i.test(literal.text) && !literal.text.startsWith("/"),
  );
}

/** A relative reference from `from` to `to`, written as `spelled` was (leading `./`, trailing `/`). */
function relativeRef(from: string, to: string, spelled: string): string {
  let ref = posix.relative(posix.dirname(from), to) || ".";
  if (spelled.startsWith("./") && !ref.startsWith(".")) ref = `./${ref}`;
  if (/^[^.]/.test(ref) && spelled.startsWith(".")) ref = `./${ref}`;
  if (spelled.endsWith("/") && !ref.endsWith("/")) ref += "/";
  return ref;
}

/** `text` of the file at `oldPath`, its relative specifiers written for `newPath` and the moves. */
export function rewriteSpecifiers(
  oldPath: string,
  newPath: string,
  text: string,
  moves: ReadonlyMap<string, string>,
): string {
  const edits: { start: number; end: number; text: string }[] = [];
  for (const literal of pathLiterals(oldPath, text)) {
    const spec = literal.text;
    const bare = !spec.startsWith(".");
    if (bare && !(literal.parent && ts.isNewExpression(literal.parent))) continue;
    const target = posix.normalize(posix.join(posix.dirname(oldPath), spec)).replace(/\/$/, "");
    const asTs = target.replace(/\.js$/, ".ts");
    let moved = moves.get(target);
    if (moved === undefined && moves.has(asTs)) moved = moves.get(asTs)!.replace(/\.ts$/, ".js");
    if (moved === undefined && oldPath === newPath) continue;
    const ref = relativeRef(newPath, moved ?? target, spec);
    const written = bare && !ref.startsWith("../") ? ref.replace(/^\.\//, "") : ref;
    if (written !== spec)
      edits.push({ start: literal.getStart() + 1, end: literal.getEnd() - 1, text: written });
  }
  let out = text;
  for (const edit of edits.sort((a, b) => b.start - a.start))
    out = out.slice(0, edit.start) + edit.text + out.slice(edit.end);
  return out;
}

/** Old path (or its tail of two or more segments) → new, where the tail's folder is shared. */
function textReplacements(moves: ReadonlyMap<string, string>): Map<string, string> {
  const out = new Map<string, string>();
  const clash = new Set<string>();
  for (const [from, to] of moves) {
    out.set(from, to);
    const parts = from.split("/");
    for (let k = 2; k < parts.length; k++) {
      const prefix = `${parts.slice(0, parts.length - k).join("/")}/`;
      if (!to.startsWith(prefix)) continue;
      const tail = parts.slice(parts.length - k).join("/");
      if (out.has(tail) && out.get(tail) !== to.slice(prefix.length)) clash.add(tail);
      else out.set(tail, to.slice(prefix.length));
    }
  }
  for (const tail of clash) out.delete(tail);
  return out;
}

/** `text` with every cited old path (whole, or a tail under a shared folder) written as the new one. */
export function rewriteCitations(text: string, moves: ReadonlyMap<string, string>): string {
  const map = textReplacements(moves);
  if (map.size === 0) return text;
  const alternatives = [...map.keys()]
    .sort((a, b) => b.length - a.length)
    .map((k) => k.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"));
  const pattern = new RegExp(
    `(?<![A-Za-z0-9_-]|[A-Za-z0-9_-]/)(?:${alternatives.join("|")})(?![A-Za-z0-9_])`,
    "g",
  );
  return text.replace(pattern, (found) => map.get(found) ?? found);
}

/** Runs git in `root`, returning its output. */
const git = (root: string, ...args: string[]) => execFileSync("git", args, { cwd: root, encoding: "utf8" });

/** Moves the files, rewrites the references, applies the layout; the paths it changed. */
export async function moveFiles(root: string, rules: readonly MoveRule[] = MOVE_RULES): Promise<string[]> {
  const tracked = git(root, "ls-files", "-z").split("\0").filter(Boolean);
  const present = new Set(tracked);
  const moves = new Map<string, string>();
  for (const path of tracked) {
    const to = destination(path, rules);
    if (to === undefined || to === path) continue;
    if (present.has(to)) throw new Error(`${path} -> ${to}: the destination exists`);
    moves.set(path, to);
  }
  const changed = new Set<string>();
  const texts = new Map<string, string>();
  for (const path of tracked.filter((p) => TEXT.test(p) && !SELF.includes(p) && p !== "package-lock.json")) {
    const before = readFileSync(join(root, path), "utf8");
    const newPath = moves.get(path) ?? path;
    let after = CODE.test(path) ? rewriteSpecifiers(path, newPath, before, moves) : before;
    after = rewriteCitations(after, moves);
    if (after !== before) texts.set(newPath, after);
  }
  for (const [from, to] of moves) {
    mkdirSync(dirname(join(root, to)), { recursive: true });
    git(root, "mv", from, to);
    changed.add(to);
  }
  for (const [path, text] of texts) {
    writeFileSync(join(root, path), text);
    changed.add(path);
  }
  const layout = await applyLayout(root);
  for (const path of layout) changed.add(path);
  const formatted = [...changed].filter((path) => /\.(ts|js|mjs|cjs|json)$/.test(path));
  // A rewritten specifier can change the imports' order and a line's length: Biome puts them right.
  if (formatted.length)
    execFileSync(join(root, "node_modules/.bin/biome"), ["check", "--write", ...formatted], { cwd: root });
  if (changed.size) git(root, "add", "--", ...changed);
  console.log(
    `move-files: ${moves.size} files moved, ${texts.size} rewritten, rules and guides: ${layout.join(", ") || "as they were"}`,
  );
  for (const [from, to] of moves) console.log(`  ${from} -> ${to}`);
  return [...changed];
}

if (process.argv[1]?.endsWith("move-files.ts")) {
  const root = process.argv.slice(2).find((arg) => !arg.startsWith("--")) ?? process.cwd();
  // It stages whole files: with others' edits uncommitted, they would go into the moves' commit.
  const dirty = git(root, "status", "--porcelain", "--untracked-files=no").trim();
  if (dirty && !process.argv.includes("--dirty")) {
    console.error(`move-files: commit or set aside these first (or pass --dirty):\n${dirty}`);
    process.exit(1);
  }
  await moveFiles(root);
}
