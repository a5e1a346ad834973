#!/usr/bin/env node
// A hook runs once per tool event and the tool waits for it: V8's compile cache (Node >= 22.1)
// saves most of the parse time of every start after the first.
import module from "node:module"
module.enableCompileCache?.()
const { main } = await import("../src/cli.js")
process.exitCode = await main(process.argv.slice(2))
