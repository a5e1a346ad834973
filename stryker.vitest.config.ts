import { defineConfig } from "vitest/config"
import { unitTier } from "./vitest.config.ts"

// The unit tier alone, for mutation testing (stryker.config.json): the runner takes a config
// file, not a project name, and the other tiers need services and take minutes per run.
export default defineConfig({
  test: { ...unitTier, testTimeout: 30_000, env: { NODE_NO_WARNINGS: "1" }, silent: "passed-only" }
})
