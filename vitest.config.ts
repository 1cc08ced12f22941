import { defineConfig } from "vitest/config";

// llama.cpp's native addon needs real child processes (forks), not VM threads: DESIGN.md section 6.
export default defineConfig({
  test: {
    pool: "forks",
    include: ["test/**/*.test.ts"],
    testTimeout: 120_000,
    hookTimeout: 180_000,
    reporters: ["default"],
  },
});
