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
