#!/usr/bin/env node
// Launcher for the `decide` command: runs the TypeScript CLI through tsx so that no build step is needed.
import { register } from "tsx/esm/api";

register();
const { main } = await import("../cli/main.ts");
process.exitCode = await main(process.argv.slice(2));
