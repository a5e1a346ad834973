import { Effect } from "effect"
import { OpenApi } from "effect/http-api"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { EngineApi } from "../http/engine/api.ts"
import { ManagementApi } from "../http/management/api.ts"

/** The generated contract files, by name under schemas/. */
export const generatedSchemas = (): Record<string, unknown> => ({
  "management.openapi.json": OpenApi.fromApi(ManagementApi),
  "engine.openapi.json": OpenApi.fromApi(EngineApi)
})

const render = (doc: unknown) => `${JSON.stringify(doc, null, 2)}\n`

export const schemasDir = join(import.meta.dirname, "..", "..", "schemas")

export const writeSchemas = Effect.sync(() =>
  Object.entries(generatedSchemas()).map(([name, doc]) => {
    const file = join(schemasDir, name)
    writeFileSync(file, render(doc))
    return join("schemas", name)
  })
)

/** Names of the checked-in files that differ from what the code generates. */
export const checkSchemas = Effect.sync(() =>
  Object.entries(generatedSchemas())
    .filter(([name, doc]) => {
      try {
        return readFileSync(join(schemasDir, name), "utf8") !== render(doc)
      } catch {
        return true
      }
    })
    .map(([name]) => name)
)
