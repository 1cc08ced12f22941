/**
 * `npm start --port-base 28000` (without `--`): npm keeps the flags before `--` for itself, sets
 * `npm_config_port_base=true` and hands the command only the value, `28000`, which `decide local`
 * then refused as `unexpected argument "28000"` with no hint. This finds the flags npm took (from
 * the `npm_config_*` variables npm sets for them) and says how to pass them.
 */
import { UsageError } from "./args.ts";
import type { CommandEnv } from "./command.ts";

/**
 * A usage error naming the flags of `flags` that npm took (its `npm_config_<flag>` is "true" in
 * `env`, which npm sets only while it runs a script), with the command that passes them; the
 * value npm left in `argv` goes back after its flag when there is one value flag (npm does not
 * say in which order several came). Undefined when npm took none.
 */
export function npmTookFlags(
  flags: Readonly<Record<string, { readonly type: "string" | "boolean" }>>,
  argv: readonly string[],
  env: CommandEnv,
): UsageError | undefined {
  if (env.npm_lifecycle_event === undefined) return undefined;
  const taken = Object.keys(flags).filter(
    (flag) => env[`npm_config_${flag.replaceAll("-", "_")}`] === "true",
  );
  if (taken.length === 0) return undefined;
  const values = argv.filter((arg) => !arg.startsWith("-"));
  const valued = taken.filter((flag) => flags[flag]!.type === "string");
  const given = taken.map((flag) => {
    if (flags[flag]!.type === "boolean") return `--${flag}`;
    return `--${flag} ${valued.length === 1 && values.length === 1 ? values[0] : "VALUE"}`;
  });
  const script = env.npm_lifecycle_event === "start" ? "npm start" : `npm run ${env.npm_lifecycle_event}`;
  return new UsageError(
    `npm kept ${taken.map((flag) => `--${flag}`).join(", ")} for itself: flags before "--" are npm's; run ${script} -- ${given.join(" ")}`,
  );
}
