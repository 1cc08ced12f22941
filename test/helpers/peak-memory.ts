/**
 * Loaded with `node --import` before a command: at exit it writes the process's peak resident
 * memory to stderr as `peak-rss-kib=N`, so a test can read what a real CLI run needed.
 */
import { writeSync } from "node:fs";

process.on("exit", () => {
  writeSync(2, `\npeak-rss-kib=${process.resourceUsage().maxRSS}\n`);
});
