/**
 * The run's embedded PostgreSQL, on a free port in the working directory, with fsync off as in
 * the tests (the figures measure the service, not this VM's disk); a new database per scenario
 * group, migrated by the service's own CLI.
 */
import { readFileSync, rmSync } from "node:fs"
import { join } from "node:path"
import { Effect, ManagedRuntime } from "effect"
import { SqlClient } from "effect/sql"
import { databaseFromUrl } from "../src/store/database.ts"
import { startEmbeddedPostgres } from "../src/store/embedded-postgres.ts"
import { freePort } from "../test/support/ports.ts"
import { baseEnv, node, root, run } from "./processes.ts"

export type Sql<A> = (sql: SqlClient.SqlClient) => Effect.Effect<A, unknown>

/** One effect against the database at `url`, on a connection pool of its own. */
export const withDb = async <A>(url: string, f: Sql<A>): Promise<A> => {
  const rt = ManagedRuntime.make(databaseFromUrl(url))
  try {
    return await rt.runPromise(Effect.flatMap(SqlClient.SqlClient, f))
  } finally {
    await rt.dispose()
  }
}

export interface Database {
  /** A new database, migrated by `signal-engine migrate`; its URL. */
  readonly newDatabase: (name: string) => Promise<string>
  /** The postmaster's pid (its backends are its children), for its CPU; undefined if unreadable. */
  readonly pid: () => number | undefined
  readonly stop: () => Promise<void>
}

export const startDatabase = async (dir: string): Promise<Database> => {
  const pg = await startEmbeddedPostgres({ dataDir: join(dir, "pg"), port: await freePort(), ephemeral: true })
  const admin = ManagedRuntime.make(databaseFromUrl(pg.url))
  const adminSql = <A>(f: Sql<A>): Promise<A> => admin.runPromise(Effect.flatMap(SqlClient.SqlClient, f))
  return {
    newDatabase: async (name) => {
      await adminSql((sql) => sql`CREATE DATABASE ${sql(name)}`)
      const url = new URL(pg.url)
      url.pathname = `/${name}`
      await run(node, [join(root, "bin", "signal-engine.js"), "migrate"], { cwd: root, env: { ...baseEnv, DATABASE_URL: url.toString() } })
      return url.toString()
    },
    // From postmaster.pid: startEmbeddedPostgres does not expose its child.
    pid: () => {
      try {
        return Number(readFileSync(join(pg.dataDir, "postmaster.pid"), "utf8").split("\n")[0]) || undefined
      } catch {
        return undefined
      }
    },
    stop: async () => {
      await admin.dispose().catch(() => undefined)
      await pg.stop()
      if (pg.dataDir !== join(dir, "pg")) rmSync(pg.dataDir, { recursive: true, force: true })
    }
  }
}
