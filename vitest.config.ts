import { defineConfig } from "vitest/config";

// llama.cpp's native addon needs real child processes (forks), not VM threads: docs/architecture.md, "Facts about llama.cpp".
export default defineConfig({
  test: {
    pool: "forks",
    // Two test files at a time, on the 2-core machines CI runs on (Vitest's default there is one):
    // most integration files wait on child processes (DynamoDB Local, llama.cpp, Chromium), and
    // every budget is derived from measured progress rather than a wall clock, so the suite holds
    // under the load it makes itself (docs/development.md, "Checks").
    maxWorkers: 2,
    minWorkers: 1,
    include: ["test/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    reporters: ["default"],
  },
});
