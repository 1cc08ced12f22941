/**
 * Nothing is wider than a 390 px phone: the review queue, an item page with every badge (a
 * dispute, a claim by someone else), the decisions view and the calibration report, each in
 * headless Chromium at 390 px, scroll no wider than the screen. Before, an item's badge overflowed
 * its card and the calibration report scrolled to 1,051 to 1,094 px.
 */
import { mkdtemp } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromiumAvailable } from "../helpers/browser.ts";
import { runDecide } from "../helpers/decide-cli.ts";
import { REPO_ROOT } from "../helpers/models.ts";
import { escalatedRecord, type ReviewPages, startReviewPages } from "../helpers/review-pages.ts";

const PHONE = { width: 390, height: 844 };
const hasChromium = chromiumAvailable();

/**
 * How wide the page scrolls, the elements that reach past the screen's right edge, and the badges
 * (and "taken by" notes) that reach past the box that holds them. Runs in the page, hence a string.
 */
const OVERFLOW = `((width) => {
  const name = (e) => e.tagName.toLowerCase() + (e.className ? "." + String(e.className).split(" ")[0] : "");
  const wider = [...document.querySelectorAll("body *")]
    .filter((e) => e.getBoundingClientRect().right > width + 0.5)
    .map((e) => name(e) + ": " + Math.round(e.getBoundingClientRect().right) + " px");
  const outside = [...document.querySelectorAll(".badge, .taken")]
    .filter((e) => e.getBoundingClientRect().right > e.parentElement.getBoundingClientRect().right + 0.5)
    .map((e) => name(e) + " past its " + name(e.parentElement) + ": " + e.textContent);
  return { scrollWidth: document.documentElement.scrollWidth, wider: wider.slice(0, 8), outside };
})(${PHONE.width})`;

async function overflow(page: Page): Promise<{ scrollWidth: number; wider: string[]; outside: string[] }> {
  return page.evaluate(OVERFLOW);
}

const FITS = { scrollWidth: PHONE.width, wider: [], outside: [] };

describe.skipIf(!hasChromium)("pages at 390 px", () => {
  let pages: ReviewPages;
  beforeAll(async () => {
    pages = await startReviewPages("narrow");
  });
  afterAll(async () => {
    await pages?.close();
  });

  it("the queue, an item with its badges and the decisions view fit the screen", async () => {
    const now = new Date().toISOString();
    const disputed = escalatedRecord(30, {
      policyId: "content-moderation",
      itemId: "POST-WITH-A-RATHER-LONG-IDENTIFIER-0001",
      chosen: "restrict",
      distribution: { allow: 0.3, restrict: 0.5, remove: 0.1, out_of_scope: 0.1 },
      reason: "audit_sample",
      disputed: true,
      firstReview: { label: "allow", reviewerId: "a", reviewerName: "Anastasia Papadopoulou", at: now },
      state: "A long post about a great many things, with a link to somewhere and several words",
    });
    const claimed = escalatedRecord(20, {
      claim: { reviewerId: "b", reviewerName: "Bartholomew Featherstonehaugh", until: Date.now() + 240_000 },
    });
    const secondReview = escalatedRecord(25, {
      policyId: "content-moderation",
      chosen: "allow",
      distribution: { allow: 0.9, restrict: 0.05, remove: 0.03, out_of_scope: 0.02 },
      reason: "audit_sample",
      firstReview: {
        label: "allow",
        reviewerId: "c",
        reviewerName: "Maximiliana Oberhauser-Lindqvist",
        at: now,
      },
    });
    await pages.store.create(disputed);
    await pages.store.create(claimed);
    await pages.store.create(secondReview);
    const { context, page } = await pages.signedIn("Ivy", "admins", PHONE);
    try {
      for (const url of [
        pages.server.url,
        pages.itemUrl(disputed),
        pages.itemUrl(claimed),
        pages.itemUrl(secondReview),
        `${pages.server.url}/decisions`,
      ]) {
        await page.goto(url);
        const seen = await overflow(page);
        expect(seen, url).toEqual(FITS);
      }
    } finally {
      await context.close();
    }
  });

  it("the calibration report fits the screen", async () => {
    const out = await mkdtemp(join(tmpdir(), "narrow-report-"));
    const run = await runDecide([
      "calibrate",
      "--input",
      join(REPO_ROOT, "events", "calibration", "ticket-routing.labelled.jsonl"),
      "--policy",
      "ticket-routing",
      "--out",
      out,
    ]);
    expect(run.code, run.stderr).toBe(0);
    const context = await pages.browser.newContext({ viewport: PHONE });
    const page = await context.newPage();
    try {
      await page.goto(pathToFileURL(join(out, "ticket-routing.report.html")).href);
      expect(await overflow(page)).toEqual(FITS);
    } finally {
      await context.close();
    }
  });
});
