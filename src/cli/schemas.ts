import { Effect, JsonSchema, Schema } from "effect"
import { OpenApi } from "effect/http-api"
import { readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { LogRecord } from "../domain/records.ts"
import { WebhookPayload } from "../domain/webhooks.ts"
import { EngineApi } from "../http/engine/api.ts"
import { ManagementApi } from "../http/management/api.ts"

/** A standalone JSON Schema (draft 2020-12) file for a schema, its definitions under `$defs`. */
const jsonSchemaFile = (schema: Schema.Top, meta: { readonly $id: string; readonly title: string; readonly description: string }) => {
  const document = Schema.toJsonSchemaDocument(schema)
  return {
    $schema: JsonSchema.META_SCHEMA_URI_DRAFT_2020_12,
    ...meta,
    ...document.schema,
    $defs: document.definitions
  }
}

/** The generated contract files, by name under schemas/. */
export const generatedSchemas = (): Record<string, unknown> => ({
  "management.openapi.json": OpenApi.fromApi(ManagementApi),
  "engine.openapi.json": OpenApi.fromApi(EngineApi),
  "log-records.schema.json": jsonSchemaFile(LogRecord, {
    $id: "log-records.schema.json",
    title: "signals log record (v1)",
    description: "The value of every record of the signals log (Kafka topic or PgLog table): JSON, keyed by user_id"
  }),
  "webhook-payloads.schema.json": jsonSchemaFile(WebhookPayload, {
    $id: "webhook-payloads.schema.json",
    title: "webhook delivery body (v1)",
    description: "The JSON body of every webhook delivery (HTTP POST): the envelope {id, type, org_id, ts, data}, with data by type. " +
      "Header X-Service-Signature: sha256=<hex HMAC-SHA256 of the raw body keyed with the webhook secret>."
  })
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
