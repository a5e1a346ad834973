#!/usr/bin/env node
// Runs the TypeScript sources directly (Node 24 strips types); no build step.
import "../src/cli/main.ts"
