import { defineConfig } from "vitest/config";

// llama.cpp's native addon needs real child processes (forks), not VM threads: docs/architecture.md, "Facts about llama.cpp".
export default defineConfig({
  test: {
    pool: "forks",
    include: ["test/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    reporters: ["default"],
  },
});
