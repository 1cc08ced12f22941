/**
 * The README and the guides in docs/ stay true to the repository: every relative link reaches a
 * file (and a heading, when it names one), every `npx decide ...` a guide shows is a command with
 * the flags it gives, every `npm run ...` a script of package.json, each guide's contents list
 * its sections, and the README stays a front door (250 lines at most).
 */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { dirname, join, relative, resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { COMMANDS, usageOf } from "../../cli/main.ts";
import { REPO_ROOT } from "../helpers/models.ts";

/** README.md and every Markdown page under docs/, by path from the root. */
const PAGES = [
  "README.md",
  ...readdirSync(join(REPO_ROOT, "docs"))
    .filter((name) => name.endsWith(".md"))
    .map((name) => `docs/${name}`),
];

const read = (path: string) => readFileSync(join(REPO_ROOT, path), "utf8");

/** The text outside fenced code blocks (links there are text, not links). */
function prose(text: string): string {
  return text.replace(/^```[\s\S]*?^```/gm, "");
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
function slug(heading: string): string {
  return heading
    .trim()
    .toLowerCase()
    .replace(/[^\p{L}\p{N} _-]/gu, "")
    .replace(/ /g, "-");
}

/** The anchors of a page's headings, with GitHub's -1, -2 suffixes for repeats. */
function anchorsOf(text: string): Set<string> {
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  for (const [, heading] of prose(text).matchAll(/^#{1,6} (.+)$/gm)) {
    const base = slug(heading!);
    const count = seen.get(base) ?? 0;
    anchors.add(count === 0 ? base : `${base}-${count}`);
    seen.set(base, count + 1);
  }
  return anchors;
}

/** Relative links of a page: `[text](target)`, not web addresses. */
function relativeLinks(text: string): string[] {
  return [...prose(text).matchAll(/\]\(([^)\s]+)\)/g)]
    .map((m) => m[1]!)
    .filter((target) => !/^[a-z]+:/i.test(target));
}

/** Where a link of `page` leads: "" when it resolves, else why not. */
function brokenLink(page: string, target: string): string {
  const [path, anchor] = target.split("#") as [string, string | undefined];
  const file = path === "" ? join(REPO_ROOT, page) : resolve(join(REPO_ROOT, dirname(page)), path);
  if (!file.startsWith(REPO_ROOT)) return "leaves the repository";
  if (!existsSync(file)) return "no such file";
  if (anchor === undefined) return "";
  if (!file.endsWith(".md") || statSync(file).isDirectory())
    return "an anchor on a file that is not Markdown";
  return anchorsOf(readFileSync(file, "utf8")).has(anchor)
    ? ""
    : `no heading #${anchor} in ${relative(REPO_ROOT, file)}`;
}

/** Every `npx decide <command> <args>` a page shows, up to a comment, a pipe or the end of code. */
function decideCommands(text: string): { command: string; args: string }[] {
  return [...text.matchAll(/npx decide ([a-z][a-z-]*)([^`\n#|]*)/g)].map((m) => ({
    command: m[1]!,
    args: m[2]!,
  }));
}

describe("the README and the guides", () => {
  it("finds the pages", () => {
    expect(PAGES).toContain("docs/getting-started.md");
    expect(PAGES.length).toBeGreaterThanOrEqual(11);
  });

  it("keeps the README a front door: 250 lines at most", () => {
    expect(read("README.md").split("\n").length - 1).toBeLessThanOrEqual(250);
  });

  it("links only to files and headings that exist", () => {
    const broken = PAGES.flatMap((page) =>
      relativeLinks(read(page))
        .map((target) => ({ target, why: brokenLink(page, target) }))
        .filter((link) => link.why !== "")
        .map((link) => `${page}: ${link.target}: ${link.why}`),
    );
    // The check sees links (the README links every guide), so an empty list means something.
    expect(relativeLinks(read("README.md")).length).toBeGreaterThan(10);
    expect(broken).toEqual([]);
  });

  it("shows only decide commands that exist, with flags their usage names", async () => {
    const shown = PAGES.flatMap((page) => decideCommands(read(page)).map((c) => ({ page, ...c })));
    expect(shown.length).toBeGreaterThan(30);
    const unknown = shown.filter((c) => !(c.command in COMMANDS)).map((c) => `${c.page}: ${c.command}`);
    expect(unknown).toEqual([]);
    const usages = new Map<string, string>();
    for (const name of new Set(shown.map((c) => c.command))) usages.set(name, await usageOf(name));
    const wrongFlags = shown.flatMap((c) =>
      [...c.args.matchAll(/(?<![\w-])(--[a-z][a-z0-9-]*)/g)]
        .map((m) => m[1]!)
        .filter((flag) => !new RegExp(`${flag}(?![a-z0-9-])`).test(usages.get(c.command)!))
        .map((flag) => `${c.page}: npx decide ${c.command} ${flag}`),
    );
    expect(wrongFlags).toEqual([]);
    const batchSubcommands = shown
      .filter((c) => c.command === "batch")
      .map((c) => c.args.trim().split(/\s/)[0]!.replace(/\\$/, ""))
      .filter((sub) => !["", "submit", "status", "results", "list"].includes(sub));
    expect(batchSubcommands).toEqual([]);
  });

  it("shows only npm scripts that package.json has, and lists every script in docs/development.md", () => {
    const scripts = Object.keys(
      (JSON.parse(read("package.json")) as { scripts: Record<string, string> }).scripts,
    );
    const shown = PAGES.flatMap((page) =>
      [...read(page).matchAll(/npm run ([a-z][\w:*-]*)/g)].map((m) => ({ page, script: m[1]! })),
    );
    expect(shown.length).toBeGreaterThan(10);
    // `bench:*` stands for the scripts it starts.
    const exists = (script: string) =>
      script.endsWith("*")
        ? scripts.some((s) => s.startsWith(script.slice(0, -1)))
        : scripts.includes(script);
    expect(shown.filter((s) => !exists(s.script)).map((s) => `${s.page}: ${s.script}`)).toEqual([]);
    const development = read("docs/development.md");
    const unlisted = scripts.filter(
      (script) =>
        !["start", "test", "format", "lint", "typecheck"].includes(script) &&
        !development.includes(`npm run ${script}`),
    );
    expect(unlisted).toEqual([]);
  });

  it("gives every guide a table of contents that lists its sections", () => {
    const guides = PAGES.filter((page) => page.startsWith("docs/"));
    const mismatched = guides.flatMap((page) => {
      const text = prose(read(page));
      const sections = [...text.matchAll(/^## (.+)$/gm)].map((m) => m[1]!).filter((h) => h !== "Contents");
      const contents = text.match(/^## Contents\n\n((?:- .*\n)+)/m);
      if (!contents) return [`${page}: no "## Contents" list`];
      const listed = [...contents[1]!.matchAll(/^- \[(.+)\]\(#([^)]+)\)$/gm)].map((m) => m[1]!);
      return JSON.stringify(listed) === JSON.stringify(sections)
        ? []
        : [`${page}: contents ${JSON.stringify(listed)} but sections ${JSON.stringify(sections)}`];
    });
    expect(mismatched).toEqual([]);
  });
});
