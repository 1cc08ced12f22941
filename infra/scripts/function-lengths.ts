/**
 * `npm run check:functions`: the functions of the source folders longer than the limit, measured
 * with the TypeScript parser as the lines from a function's first line to its last (nested
 * functions count in the function that holds them, and again on their own): declarations,
 * methods, constructors, accessors, arrow functions and function expressions. Prints the longest
 * and exits 1 when any passes the limit (default 80).
 */
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import ts from "typescript";
import { type SourceFile, sourceFiles } from "./check-imports.ts";

/** The longest a function may be, in lines. */
export const MAX_FUNCTION_LINES = 80;

/** One function and its length. */
export interface FunctionLength {
  readonly file: string;
  readonly name: string;
  readonly line: number;
  readonly lines: number;
}

/** A readable name for a function node: its own, its variable's or property's, or "anonymous". */
function nameOf(node: ts.Node, source: ts.SourceFile): string {
  if (ts.isConstructorDeclaration(node)) return `${nameOf(node.parent, source)}.constructor`;
  const named = node as { name?: ts.Node };
  if (named.name && (ts.isIdentifier(named.name) || ts.isStringLiteral(named.name))) return named.name.text;
  const parent = node.parent;
  if (
    parent &&
    (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) &&
    ts.isIdentifier(parent.name)
  )
    return parent.name.text;
  if (parent && ts.isCallExpression(parent))
    return `callback of ${parent.expression.getText(source).slice(0, 40)}`;
  return "anonymous";
}

/** Every function of `file` with its length in lines. */
export function functionLengths(file: SourceFile): FunctionLength[] {
  const source = ts.createSourceFile(file.path, file.text, ts.ScriptTarget.Latest, true);
  const found: FunctionLength[] = [];
  const visit = (node: ts.Node) => {
    if (ts.isFunctionLike(node) && "body" in node && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      found.push({ file: file.path, name: nameOf(node, source), line: start + 1, lines: end - start + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** The functions of `files` longer than `limit` lines, longest first. */
export function longFunctions(files: readonly SourceFile[], limit = MAX_FUNCTION_LINES): FunctionLength[] {
  return files
    .flatMap(functionLengths)
    .filter((f) => f.lines > limit)
    .sort((a, b) => b.lines - a.lines);
}

if (process.argv[1] && fileURLToPath(import.meta.url) === resolve(process.argv[1])) {
  process.chdir(fileURLToPath(new URL("../..", import.meta.url)));
  const files = sourceFiles(".");
  const long = longFunctions(files);
  for (const f of long) console.error(`${f.file}:${f.line} ${f.name}: ${f.lines} lines`);
  const longest = files.flatMap(functionLengths).sort((a, b) => b.lines - a.lines)[0];
  console.log(
    `check:functions: ${long.length} functions over ${MAX_FUNCTION_LINES} lines in ${files.length} files` +
      (longest ? ` (longest: ${longest.file} ${longest.name}, ${longest.lines})` : ""),
  );
  process.exit(long.length ? 1 : 0);
}
