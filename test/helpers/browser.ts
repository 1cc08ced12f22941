/**
 * Headless Chromium for page tests: Debian's chromium driven by playwright-core (no browser
 * download). Tests that need it skip, saying why, when it is absent.
 */
import { existsSync } from "node:fs";
import { type Browser, chromium } from "playwright-core";

/** Where Debian installs Chromium. */
export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

/** Whether Chromium is installed; logs a skip notice when it is not. */
export function chromiumAvailable(): boolean {
  if (existsSync(CHROMIUM_PATH)) return true;
  console.warn(
    `SKIP: ${CHROMIUM_PATH} is absent (apt-get install chromium), so the browser checks do not run`,
  );
  return false;
}

/** Launches headless Chromium with the flags this sandboxed, offline machine needs. */
export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    headless: true,
    args: [
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}

/** Signs `page` in through the local mode's sign-in stub at `baseUrl` and waits for the queue. */
export async function signInLocally(
  page: import("playwright-core").Page,
  baseUrl: string,
  name: string,
  group: "reviewers" | "admins",
): Promise<void> {
  await page.goto(`${baseUrl}/auth/login`);
  await page.getByLabel("Name").fill(name);
  await page.locator(`input[name=group][value=${group}]`).check();
  await Promise.all([page.waitForURL(`${baseUrl}/`), page.getByRole("button", { name: "Sign in" }).click()]);
}

/** The decisions view's rows (not the detail rows, nor the live-audit table's above them). */
export const DECISION_ROWS = "table:not(#live-audit-table) tbody tr:not(.detail)";
