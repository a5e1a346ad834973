import { globSync, readFileSync, writeFileSync } from "node:fs"
import { createContext } from "@dprint/formatter"
import * as typescript from "@dprint/typescript"

/**
 * `npm run format` / `npm run format:check`: dprint's TypeScript plugin (Wasm, from npm) over the
 * files dprint.json includes, with its settings. The dprint CLI ships a native binary per
 * platform, which the registries CI reaches do not all serve; the plugin is the same formatter.
 */
const config = JSON.parse(readFileSync("dprint.json", "utf8")) as {
  readonly lineWidth: number
  readonly indentWidth: number
  readonly typescript: Record<string, unknown>
  readonly includes: ReadonlyArray<string>
  readonly excludes: ReadonlyArray<string>
}
const check = process.argv.includes("--check")
const context = createContext({ lineWidth: config.lineWidth, indentWidth: config.indentWidth })
context.addPlugin(readFileSync(typescript.getPath()), config.typescript)

const files = globSync([...config.includes], { exclude: [...config.excludes] }).sort()
const unformatted: Array<string> = []
for (const file of files) {
  const text = readFileSync(file, "utf8")
  const formatted = context.formatText({ filePath: file, fileText: text })
  if (formatted === text) continue
  unformatted.push(file)
  if (!check) writeFileSync(file, formatted)
}
if (check && unformatted.length > 0) {
  console.error(`not formatted (npm run format fixes them):\n  ${unformatted.join("\n  ")}`)
  process.exit(1)
}
console.log(`${files.length} files${check ? " checked" : `, ${unformatted.length} formatted`}`)
