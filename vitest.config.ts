import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    globalSetup: ["test/support/global-setup.ts"],
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Each file gets its own database and server; two workers match the 2-core machines we run on.
    maxWorkers: 2,
    env: { NODE_NO_WARNINGS: "1" },
    // Service logs (banners, the defects a test provokes on purpose) only for tests that fail.
    silent: "passed-only",
    // CI reads the counts from a machine-readable report next to the usual one.
    reporters: process.env.VITEST_JSON_REPORT ? ["default", ["json", { outputFile: process.env.VITEST_JSON_REPORT }]] : ["default"]
  }
})
