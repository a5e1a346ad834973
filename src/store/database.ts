import { PgClient, PgMigrator } from "@effect/sql-pg"
import { Config, Context, Effect, Layer, Option, Redacted, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { join } from "node:path"
import { startEmbeddedPostgres } from "./embedded-postgres.ts"
import { buildEventReadIndexes, eventReadIndexes, latestMigrationId, migrations } from "./migrations.ts"

export class DatabaseStartError extends Schema.TaggedError<DatabaseStartError>()("DatabaseStartError", {
  message: Schema.String
}) {}

/** Where the database is, for logs: an external server, or the embedded cluster's data directory. */
export class DatabaseInfo extends Context.Service<DatabaseInfo, {
  readonly description: string
}>()("signal-engine/store/DatabaseInfo") {}

export const poolConfig = {
  maxConnections: 20,
  idleTimeout: "60 seconds",
  connectTimeout: "10 seconds",
  applicationName: "signal-engine"
} as const

/**
 * The SqlClient: `DATABASE_URL` when set, otherwise an embedded PostgreSQL under `DATA_DIR`
 * (default `.data`), started with the service and stopped with it.
 */
export const DatabaseLive = Layer.unwrap(
  Effect.gen(function*() {
    const url = yield* Config.option(Config.Redacted("DATABASE_URL"))
    if (Option.isSome(url)) {
      return Layer.merge(
        PgClient.layer({ url: url.value, ...poolConfig }),
        Layer.succeed(DatabaseInfo, { description: "external PostgreSQL (DATABASE_URL)" })
      )
    }
    const dataDir = yield* Config.String("DATA_DIR").pipe(Config.withDefault(".data"))
    const port = yield* Config.Port("EMBEDDED_POSTGRES_PORT").pipe(Config.withDefault(55432))
    const embedded = yield* Effect.acquireRelease(
      Effect.tryPromise({
        try: () =>
          startEmbeddedPostgres({
            dataDir: join(dataDir, "postgres"),
            port,
            log: (line) => console.error(line)
          }),
        catch: (cause) => new DatabaseStartError({ message: `embedded PostgreSQL did not start: ${String(cause)}` })
      }),
      (pg) => Effect.promise(() => pg.stop())
    )
    return Layer.merge(
      PgClient.layer({ url: Redacted.make(embedded.url), ...poolConfig }),
      Layer.succeed(DatabaseInfo, {
        description: `embedded PostgreSQL on 127.0.0.1:${embedded.port} (data in ${embedded.dataDir})`
      })
    )
  })
)

/** A client for a given URL (tests, tools). */
export const databaseFromUrl = (url: string) =>
  Layer.merge(
    PgClient.layer({ url: Redacted.make(url), ...poolConfig }),
    Layer.succeed(DatabaseInfo, { description: "PostgreSQL (given URL)" })
  )

/**
 * Applies pending migrations. Safe when several nodes start at once: a transaction-scoped
 * advisory lock serialises them, and the migrator skips what is already applied.
 */
export const migrate = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const applied = yield* sql.withTransaction(
    Effect.gen(function*() {
      yield* sql`SELECT pg_advisory_xact_lock(hashtext('signal-engine:migrations'))`
      return yield* PgMigrator.run({ loader: migrations })
    })
  )
  // Read indexes a full replay dropped and did not get to build again (it was interrupted).
  const present = yield* sql<{ readonly indexname: string }>`
    SELECT indexname FROM pg_indexes WHERE tablename = 'events' AND indexname IN ${sql.in(eventReadIndexes.map((i) => i.name))}`
  if (present.length < eventReadIndexes.length) {
    yield* Effect.logWarning("events read indexes missing (an interrupted replay?); building them")
    yield* buildEventReadIndexes
  }
  return applied
}).pipe(Effect.withSpan("Database.migrate"))

/** True when the database answers and has every migration this build knows. */
export const schemaIsCurrent = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql<{ readonly id: number }>`SELECT max(migration_id) AS id FROM effect_sql_migrations`
  return (rows[0]?.id ?? 0) >= latestMigrationId
})
