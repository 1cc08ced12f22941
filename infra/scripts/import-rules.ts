/**
 * Which folder may import which: the layering rules, written once. `npm run check:imports`
 * (infra/scripts/check-imports.ts) enforces them on every source file, and the Layout table of
 * docs/development.md shows them (a test keeps the two equal).
 *
 * A folder's rule lists the folders its files may import from (its own is always allowed);
 * packages are allowed unless the folder forbids them. The most specific folder prefix wins.
 */

/** One folder's rule. */
export interface ImportRule {
  /** Folders (path prefixes) its files may import. */
  readonly may: readonly string[];
  /** Package name prefixes its files must not import. */
  readonly forbiddenPackages?: readonly string[];
}

/** Every source folder and what it may import, from the innermost layer out. */
export const IMPORT_RULES = {
  "shared/domain": {
    may: [],
    forbiddenPackages: ["@aws-sdk/", "hono", "@middy/", "@aws-lambda-powertools/"],
  },
  "shared/reports": {
    may: ["shared/domain"],
    forbiddenPackages: ["@aws-sdk/", "hono", "@middy/", "@aws-lambda-powertools/"],
  },
  "shared/adapters": { may: ["shared/domain"] },
  "shared/use-cases": { may: ["shared/domain", "shared/reports"], forbiddenPackages: ["@aws-sdk/", "hono"] },
  "shared/pages": {
    may: ["shared/domain", "shared/use-cases", "shared/adapters", "shared/reports"],
    forbiddenPackages: ["@aws-sdk/"],
  },
  "endpoint/gguf": { may: [], forbiddenPackages: ["@aws-sdk/"] },
  "endpoint/runtime": { may: ["shared/domain"], forbiddenPackages: ["@aws-sdk/"] },
  "endpoint/scorer": { may: ["endpoint/runtime", "shared/domain"], forbiddenPackages: ["@aws-sdk/"] },
  "endpoint/models": {
    may: ["endpoint/gguf", "endpoint/scorer", "shared/domain"],
    forbiddenPackages: ["@aws-sdk/"],
  },
  "endpoint/chat": {
    may: ["endpoint/runtime", "endpoint/scorer", "shared/domain"],
    forbiddenPackages: ["@aws-sdk/"],
  },
  "endpoint/server": {
    may: ["endpoint/chat", "endpoint/runtime", "endpoint/scorer", "endpoint/models", "shared/domain"],
    forbiddenPackages: ["@aws-sdk/"],
  },
  "endpoint/openapi": {
    may: ["endpoint/server", "endpoint/chat", "shared/domain"],
    forbiddenPackages: ["@aws-sdk/"],
  },
  functions: { may: ["shared"], forbiddenPackages: ["@aws-sdk/"] },
  "infra/capacity": { may: ["shared/domain"], forbiddenPackages: ["@aws-sdk/"] },
  "infra/constructs": { may: ["shared/domain", "shared/adapters"], forbiddenPackages: ["@aws-sdk/"] },
  "infra/local": { may: ["functions", "endpoint", "shared"], forbiddenPackages: ["@aws-sdk/"] },
  "infra/scripts": { may: ["infra", "endpoint", "shared"], forbiddenPackages: ["@aws-sdk/"] },
  infra: { may: ["infra/constructs", "shared/domain"], forbiddenPackages: ["@aws-sdk/"] },
  cli: {
    may: ["infra/local", "infra/capacity", "endpoint", "functions", "shared"],
    forbiddenPackages: ["@aws-sdk/"],
  },
  bin: { may: ["cli"] },
} as const satisfies Record<string, ImportRule>;

/** A source folder named in {@link IMPORT_RULES}. */
export type RuledFolder = keyof typeof IMPORT_RULES;

/** The top-level folders that hold source code (tests, docs and samples aside). */
export const SOURCE_ROOTS = ["bin", "cli", "endpoint", "functions", "infra", "shared"] as const;

/** The rule of the most specific folder that holds `path`, or undefined for an unruled file. */
export function ruleFor(path: string): { folder: RuledFolder; rule: ImportRule } | undefined {
  const folders = (Object.keys(IMPORT_RULES) as RuledFolder[])
    .filter((folder) => path.startsWith(`${folder}/`))
    .sort((a, b) => b.length - a.length);
  const folder = folders[0];
  return folder ? { folder, rule: IMPORT_RULES[folder] } : undefined;
}

/** "may import shared/domain, shared/use-cases; not @aws-sdk/" for the Layout table (docs/development.md). */
export function describeRule(rule: ImportRule): string {
  const may = rule.may.length
    ? `may import ${rule.may.map((f) => `\`${f}/\``).join(", ")}`
    : "imports no other folder";
  const not = rule.forbiddenPackages?.length
    ? `; never ${rule.forbiddenPackages.map((p) => `\`${p}\``).join(", ")}`
    : "";
  return may + not;
}
