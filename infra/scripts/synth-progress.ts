/**
 * What `npm run synth` says while it works (about two and a half minutes, most of it bundling the
 * functions, which printed nothing readable): cdk's "Bundling asset <stack>/<path>/Code/Stage..."
 * lines become one short line per function on stderr, and each later step names itself.
 */

/** "synth: bundling function 3: Decide" for a cdk bundling line, undefined for any other line. */
export function bundlingProgress(line: string, count: number): string | undefined {
  const match = /^Bundling asset (\S+?)(?:\/Code)?(?:\/Stage)?\.\.\.$/.exec(line);
  if (!match) return undefined;
  const path = match[1]!.split("/");
  return `synth: bundling function ${count}: ${path.slice(1).join("/") || path[0]}`;
}
