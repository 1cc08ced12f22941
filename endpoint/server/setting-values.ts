/**
 * How one setting of the endpoint is read: from its flag, else the first of its environment
 * variables that is set and not empty, else its default; the raw text parsed by a reader
 * (integers in a range, one of some words, booleans, comma-separated lists) that refuses a bad
 * value with a {@link ConfigError} naming the flag or variable at fault. `config.ts` declares the
 * endpoint's settings with these.
 */

/** One setting: its flag, its environment variable, its default and how to read it. */
export interface Setting<T> {
  readonly flag: string;
  /** A flag given bare (`--any-model`) rather than with a value. */
  readonly switch?: boolean;
  /** A flag that may be given more than once (its values are joined with commas). */
  readonly repeatable?: boolean;
  readonly env: readonly string[];
  readonly fallback: () => T;
  readonly parse: (raw: string, name: string) => T;
  readonly help: string;
}

/** Why a setting could not be used. */
export class ConfigError extends Error {
  override name = "ConfigError";
}

export const integer =
  (min: number, max: number) =>
  (raw: string, name: string): number => {
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min || value > max) {
      throw new ConfigError(`${name} must be an integer from ${min} to ${max}, got "${raw}"`);
    }
    return value;
  };
export const oneOf =
  <T extends string>(values: readonly T[]) =>
  (raw: string, name: string): T => {
    const value = (values.find((v) => v.toLowerCase() === raw.toLowerCase()) ?? "") as T;
    if (!value) throw new ConfigError(`${name} must be one of ${values.join(", ")}, got "${raw}"`);
    return value;
  };
export const boolean = (raw: string, name: string): boolean => {
  if (/^(1|true|yes|on)$/i.test(raw)) return true;
  if (/^(0|false|no|off)$/i.test(raw)) return false;
  throw new ConfigError(`${name} must be true or false, got "${raw}"`);
};
export const text = (raw: string): string => raw;
export const list = (raw: string): string[] =>
  raw
    .split(",")
    .map((item) => item.trim())
    .filter(Boolean);

/** Flags as parsed from the command line: repeated flags arrive as a list, bare switches as true. */
export type SettingFlags = Readonly<
  Record<string, string | boolean | readonly (string | boolean)[] | undefined>
>;

/** The environment the settings are read from. */
export type SettingEnv = Readonly<Record<string, string | undefined>>;

/** Each setting of `settings` resolved from `flags`, else `env`, else its default, by key. */
export function resolveSettings(
  settings: Readonly<Record<string, Setting<unknown>>>,
  flags: SettingFlags,
  env: SettingEnv,
): Record<string, unknown> {
  const config: Record<string, unknown> = {};
  for (const [key, setting] of Object.entries(settings)) {
    const raw = flags[setting.flag];
    // Repeated flags arrive as a list, bare switches as true.
    const flagValue =
      raw === undefined
        ? undefined
        : typeof raw === "string"
          ? raw
          : Array.isArray(raw)
            ? raw.join(",")
            : String(raw);
    const envName = setting.env.find((name) => env[name] !== undefined && env[name] !== "");
    if (flagValue !== undefined) config[key] = setting.parse(flagValue, `--${setting.flag}`);
    else if (envName) config[key] = setting.parse(env[envName]!, envName);
    else config[key] = setting.fallback();
  }
  return config;
}

/** One line per setting: its flag, its variables and its help. */
export function helpLines(settings: Readonly<Record<string, Setting<unknown>>>): string {
  return Object.values(settings)
    .map((s) => `  --${s.flag.padEnd(16)} ${s.env.join(" / ").padEnd(36)} ${s.help}`)
    .join("\n");
}
