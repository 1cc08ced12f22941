import { defineConfig } from "vitest/config";

// llama.cpp's native addon needs real child processes (forks), not VM threads: docs/architecture.md, "Facts about llama.cpp".
export default defineConfig({
  test: {
    pool: "forks",
    // Two test files at a time: vitest's default on 2 cores is one, and most files spend their
    // time waiting on servers (DynamoDB Local, llama.cpp, the local pipeline), not on a core.
    // Their time budgets derive from latency measured as they run, so they hold beside each other.
    maxWorkers: 2,
    include: ["test/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    reporters: ["default"],
  },
});
