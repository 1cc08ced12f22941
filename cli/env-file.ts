/**
 * The env file `npm start` writes in its data folder (`.cache/local/env`): the variables with
 * which the other commands reach the local mode, as `export NAME='value'` lines that a shell
 * can `source`, and that every `decide` command reads with `--local-env FILE`. As with Node's own
 * `--env-file`, a variable already set (not empty) in the environment wins over the file's. The
 * flag is not called `--env-file`: Node 20 reads that one anywhere in the arguments, after the
 * script's name too, and exits 9 before the command runs when the file is missing.
 */
import { readFileSync } from "node:fs";
import { UsageError } from "./args.ts";
import { cannotRead } from "./input-file.ts";

/** The flag every command takes, and what it means, for the usage texts. */
export const ENV_FILE_USAGE =
  "--local-env FILE  read the variables npm start wrote (.cache/local/env); set ones win";

/** The flag's name. */
const FLAG = "--local-env";

/** `value` quoted for a POSIX shell: single quotes, an inner one as '\''. */
function shellQuoted(value: string): string {
  return `'${value.replaceAll("'", `'\\''`)}'`;
}

/** The file's text: a comment naming what wrote it, then one `export NAME='value'` line each. */
export function envFileText(variables: Readonly<Record<string, string>>, comment: string): string {
  const lines = Object.entries(variables).map(([name, value]) => `export ${name}=${shellQuoted(value)}`);
  return `# ${comment}\n${lines.join("\n")}\n`;
}

/**
 * The variables of an env file: `NAME=value` lines, `export ` allowed before them, values bare,
 * in double quotes or in single quotes (with `'\''` for a quote, as {@link envFileText} writes);
 * blank lines and `#` comments skipped. A line of another shape is a mistake named by its number.
 */
export function parseEnvFile(text: string, file: string): Record<string, string> {
  const variables: Record<string, string> = {};
  for (const [index, raw] of text.split(/\r?\n/).entries()) {
    const line = raw.trim();
    if (line === "" || line.startsWith("#")) continue;
    const match = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)=(.*)$/.exec(line);
    if (!match) throw new UsageError(`${file}: line ${index + 1} is not NAME=value`);
    variables[match[1]!] = unquoted(match[2]!, `${file}: line ${index + 1}`);
  }
  return variables;
}

/** A value as the shell reads it: `'...'` pieces (with `'\''`), `"..."`, or bare. */
function unquoted(value: string, where: string): string {
  if (value.startsWith('"')) {
    if (!value.endsWith('"') || value.length < 2) throw new UsageError(`${where}: a quote is not closed`);
    return value.slice(1, -1).replace(/\\(["\\$`])/g, "$1");
  }
  if (!value.startsWith("'")) return value;
  // 'a'\''b' is three pieces: 'a', an escaped quote, 'b'.
  const pieces = /^(?:'[^']*'|\\')+$/.exec(value);
  if (!pieces) throw new UsageError(`${where}: a quote is not closed`);
  return [...value.matchAll(/'([^']*)'|\\'/g)].map((m) => m[1] ?? "'").join("");
}

/** `argv` without `--local-env FILE` (or `--local-env=FILE`), and the file it named. */
export function takeEnvFileFlag(argv: readonly string[]): { argv: string[]; envFile?: string } {
  const rest: string[] = [];
  let envFile: string | undefined;
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === FLAG) {
      envFile = argv[++i];
      if (envFile === undefined || envFile.startsWith("--"))
        throw new UsageError(`${FLAG} needs a file: the one npm start wrote, .cache/local/env`);
    } else if (arg.startsWith(`${FLAG}=`)) envFile = arg.slice(FLAG.length + 1);
    else rest.push(arg);
  }
  return envFile === undefined ? { argv: rest } : { argv: rest, envFile };
}

/** Sets in `env` each variable of `file` that `env` leaves unset or empty; returns how many it set. */
export function applyEnvFile(file: string, env: NodeJS.ProcessEnv): number {
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch (error) {
    const reason = cannotRead(file, error).message;
    throw new UsageError(`${reason} (npm start writes it as it starts: is it running?)`, { cause: error });
  }
  let set = 0;
  for (const [name, value] of Object.entries(parseEnvFile(text, file))) {
    if (env[name]) continue;
    env[name] = value;
    set++;
  }
  return set;
}
