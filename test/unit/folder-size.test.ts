/**
 * A reader scans a folder with `ls` (issue 43, item 3): no source folder holds more than about 25
 * files directly. Where one grows past that, a concept has usually been found that deserves a
 * sub-folder (`cli/calibrate/`, `shared/adapters/dynamodb/`, the presentation room
 * `shared/reports/`); the cap is a smoke alarm, with a little room above the goal.
 */
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { SOURCE_ROOTS } from "../../infra/scripts/import-rules.ts";
import { REPO_ROOT } from "../helpers/models.ts";

/** The most files a source folder holds directly. */
const MOST_FILES = 25;

/** Every folder under `folder` (itself included) with the number of files it holds directly. */
function folderSizes(folder: string): [string, number][] {
  const entries = readdirSync(join(REPO_ROOT, folder), { withFileTypes: true });
  const own: [string, number] = [folder, entries.filter((e) => e.isFile()).length];
  return [own, ...entries.filter((e) => e.isDirectory()).flatMap((e) => folderSizes(`${folder}/${e.name}`))];
}

describe("source folders", () => {
  it(`hold at most ${MOST_FILES} files each, directly`, () => {
    const sizes = SOURCE_ROOTS.flatMap(folderSizes);
    expect(sizes.length).toBeGreaterThan(20);
    expect(
      sizes.filter(([, files]) => files > MOST_FILES).map(([folder, files]) => `${folder}: ${files}`),
    ).toEqual([]);
  });
});
