import { defineConfig } from "vitest/config"

// Three tiers, one folder each. `unit` is pure (no database, broker, server or process, and no
// wait on real time past a fraction of a second) and runs in seconds; `integration` talks to a
// real PostgreSQL or Kafka, or needs real time, real garbage collection or a child process; `e2e`
// starts the service and talks HTTP to it. Only the tiers that need them start the services (and,
// for e2e, install the external tools). The unit tier reuses its workers across files: most of
// its time went to each file importing effect afresh.
const services = "test/support/global-setup.ts"

/** The unit tier (also what `npm run mutation` runs against each mutant: stryker.vitest.config.ts). */
export const unitTier = { name: "unit", include: ["test/unit/**/*.test.ts"], isolate: false }

export default defineConfig({
  test: {
    testTimeout: 30_000,
    hookTimeout: 120_000,
    // Each file gets its own database and server; two workers match the 2-core machines we run on.
    maxWorkers: 2,
    env: { NODE_NO_WARNINGS: "1" },
    // Service logs (banners, the defects a test provokes on purpose) only for tests that fail.
    silent: "passed-only",
    // CI reads the counts from a machine-readable report next to the usual one.
    reporters: process.env.VITEST_JSON_REPORT ? ["default", ["json", { outputFile: process.env.VITEST_JSON_REPORT }]] : ["default"],
    projects: [
      { extends: true, test: unitTier },
      { extends: true, test: { name: "integration", include: ["test/integration/**/*.test.ts"], globalSetup: [services] } },
      {
        extends: true,
        test: { name: "e2e", include: ["test/e2e/**/*.test.ts"], globalSetup: [services, "test/support/global-tools.ts"] }
      }
    ]
  }
})
