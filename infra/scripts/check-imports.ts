/**
 * `npm run check:imports`: every import of every source file checked against the layering rules
 * (infra/scripts/import-rules.ts), and no import circle between files or between top-level
 * folders. Imports are read with the TypeScript compiler's parser (static, type-only, re-exports
 * and dynamic `import()` alike), so a rule cannot be dodged by the import's spelling. Exits 1,
 * listing each forbidden import as `file: specifier (rule)`.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join, posix, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { IMPORT_RULES, ruleFor, SOURCE_ROOTS } from "./import-rules.ts";

/** A source file: its repository path and text. */
export interface SourceFile {
  readonly path: string;
  readonly text: string;
}

/** Every module specifier a file imports or re-exports, in order. */
export function importsOf(file: SourceFile): string[] {
  const source = ts.createSourceFile(file.path, file.text, ts.ScriptTarget.Latest, false);
  const found: string[] = [];
  const visit = (node: ts.Node) => {
    if ((ts.isImportDeclaration(node) || ts.isExportDeclaration(node)) && node.moduleSpecifier)
      if (ts.isStringLiteral(node.moduleSpecifier)) found.push(node.moduleSpecifier.text);
    if (
      ts.isCallExpression(node) &&
      node.expression.kind === ts.SyntaxKind.ImportKeyword &&
      node.arguments[0] &&
      ts.isStringLiteralLike(node.arguments[0])
    )
      found.push(node.arguments[0].text);
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The repository path a relative specifier points to, or undefined for a package. */
function target(from: string, specifier: string): string | undefined {
  if (!specifier.startsWith(".")) return undefined;
  return posix.join(posix.dirname(from), specifier);
}

/** The top-level folder of a path. */
const rootOf = (path: string) => path.split("/")[0]!;

/** Import cycles among `edges` (strongly connected components of more than one node). */
export function cycles(edges: ReadonlyMap<string, readonly string[]>): string[][] {
  let index = 0;
  const order = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const connect = (v: string) => {
    order.set(v, index);
    low.set(v, index++);
    stack.push(v);
    onStack.add(v);
    for (const w of edges.get(v) ?? []) {
      if (!edges.has(w)) continue;
      if (!order.has(w)) {
        connect(w);
        low.set(v, Math.min(low.get(v)!, low.get(w)!));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v)!, order.get(w)!));
    }
    if (low.get(v) !== order.get(v)) return;
    const component: string[] = [];
    let w: string;
    do {
      w = stack.pop()!;
      onStack.delete(w);
      component.push(w);
    } while (w !== v);
    if (component.length > 1) found.push(component.sort());
  };
  for (const v of edges.keys()) if (!order.has(v)) connect(v);
  return found;
}

/** Every broken rule among `files`: forbidden imports, then file and folder cycles. */
export function violations(files: readonly SourceFile[]): string[] {
  const problems: string[] = [];
  const fileEdges = new Map<string, string[]>();
  const folderEdges = new Map<string, Set<string>>();
  for (const file of files) {
    const ruled = ruleFor(file.path);
    if (!ruled)
      problems.push(`${file.path}: no import rule covers this folder (infra/scripts/import-rules.ts)`);
    const targets: string[] = [];
    for (const specifier of importsOf(file)) {
      const to = target(file.path, specifier);
      if (to === undefined) {
        const banned = ruled?.rule.forbiddenPackages?.find((p) => specifier.startsWith(p));
        if (banned) problems.push(`${file.path}: ${specifier} (${ruled!.folder}/ never imports ${banned})`);
        continue;
      }
      targets.push(to);
      const own = ruled && to.startsWith(`${ruled.folder}/`);
      const allowed = ruled?.rule.may.some((folder) => to === folder || to.startsWith(`${folder}/`));
      if (ruled && !own && !allowed)
        problems.push(
          `${file.path}: ${specifier} (${ruled.folder}/ may import ${ruled.rule.may.join(", ") || "no other folder"})`,
        );
      if (rootOf(to) !== rootOf(file.path)) {
        const set = folderEdges.get(rootOf(file.path)) ?? new Set<string>();
        folderEdges.set(rootOf(file.path), set.add(rootOf(to)));
      }
    }
    fileEdges.set(file.path, targets);
  }
  for (const cycle of cycles(fileEdges)) problems.push(`import circle between files: ${cycle.join(" -> ")}`);
  const folders = new Map([...folderEdges].map(([k, v]) => [k, [...v]] as const));
  for (const cycle of cycles(folders)) problems.push(`import circle between folders: ${cycle.join(" -> ")}`);
  return problems;
}

/** The repository's source files (the folders of {@link SOURCE_ROOTS}). */
export function sourceFiles(root: string): SourceFile[] {
  const files: SourceFile[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(join(root, dir), { withFileTypes: true })) {
      const path = `${dir}/${entry.name}`;
      if (entry.isDirectory()) walk(path);
      else if (/\.(ts|js)$/.test(entry.name))
        files.push({ path, text: readFileSync(join(root, path), "utf8") });
    }
  };
  for (const folder of SOURCE_ROOTS) walk(folder);
  return files;
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  process.chdir(fileURLToPath(new URL("../..", import.meta.url)));
  const files = sourceFiles(".");
  const problems = violations(files);
  for (const problem of problems) console.error(problem);
  console.log(
    problems.length
      ? `check:imports: ${problems.length} problems in ${files.length} files`
      : `check:imports: ${files.length} files keep the ${Object.keys(IMPORT_RULES).length} folder rules, no import circle`,
  );
  process.exit(problems.length ? 1 : 0);
}
