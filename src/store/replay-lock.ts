import { Effect, Layer, Schedule, Schema, type Scope } from "effect"
import { SqlClient } from "effect/sql"
import type { Connection } from "effect/sql/SqlConnection"
import type { SqlError } from "effect/sql/SqlError"

/**
 * Serving nodes and `signal-engine replay` exclude each other. A replay empties and rewrites the
 * projections; a node serving meanwhile would write into them from actor state the replay is
 * rebuilding. So every serving node holds one PostgreSQL advisory lock of the database in shared
 * mode for as long as it runs, and a replay takes it exclusively: it refuses to start while a node
 * holds it, and a node that starts during a replay waits (before migrating or consuming) until
 * the replay ends. The lock is a session lock on a connection kept for it (as PgLog's partition
 * locks are), so it is released when the process or that connection ends, crashed or not.
 * Advisory locks belong to one database: services on other databases of the server do not count.
 */
const key = [0x5347_4e45, 1] as const // two int4 keys ("SGNE", 1): pg_locks shows classid, objid, objsubid 2

/** A replay was asked for while the service runs on the database, or while another replay does. */
export class ReplayLocked extends Schema.TaggedError<ReplayLocked>()("ReplayLocked", {
  message: Schema.String
}) {}

/** A connection of the pool's, kept for the lock; it unlocks before going back, so the release is done with the scope. */
const session = Effect.gen(function*() {
  const connection = yield* (yield* SqlClient.SqlClient).reserve
  yield* Effect.addFinalizer(() => Effect.ignore(connection.execute("SELECT pg_advisory_unlock_all()", [], undefined)))
  return connection
})

const tryLock = (connection: Connection, fn: "pg_try_advisory_lock" | "pg_try_advisory_lock_shared") =>
  Effect.map(connection.executeValues(`SELECT ${fn}($1, $2)`, key), (rows) => rows[0]?.[0] === true)

/** Takes the lock shared on a new session, waiting for a replay that holds it; `waiting` is logged then. */
const holdShared = (waiting: Effect.Effect<void>) =>
  Effect.gen(function*() {
    const connection = yield* session
    if (!(yield* tryLock(connection, "pg_try_advisory_lock_shared"))) {
      yield* waiting
      yield* connection.executeValues("SELECT pg_advisory_lock_shared($1, $2)", key)
    }
    return connection
  })

/** Fails when the session is gone (and with it the lock). */
const watch = (connection: Connection) => connection.executeValues("SELECT 1", []).pipe(Effect.delay("5 seconds"), Effect.forever)

/**
 * Held by every serving node from before its migrations until it stops. Start-up waits here while
 * a replay runs. A session lost later (a database restart) is taken again; if a replay started in
 * between, the node says so, since it is then serving beside a rebuild.
 */
export const ServingLock: Layer.Layer<never, SqlError, SqlClient.SqlClient> = Layer.effectDiscard(
  Effect.gen(function*() {
    const connection = yield* holdShared(
      Effect.logWarning("a replay is rebuilding the projections (signal-engine replay holds the database); starting when it ends")
    )
    const lost = (e: SqlError) => Effect.logWarning("lost the database session holding the serving lock; taking it again", e.message)
    const again = Effect.scoped(
      Effect.flatMap(
        holdShared(Effect.logError("a replay started while this node was serving (its lock session was lost); stop one of them")),
        watch
      )
    ).pipe(Effect.tapError(lost), Effect.retry(Schedule.spaced("1 second")))
    yield* watch(connection).pipe(
      Effect.tapError(lost),
      Effect.catch(() => again),
      Effect.forkScoped
    )
  })
)

/** Taken by a replay for its whole run; fails at once, saying who holds it, when anyone does. */
export const holdForReplay: Effect.Effect<void, ReplayLocked | SqlError, SqlClient.SqlClient | Scope.Scope> = Effect.gen(function*() {
  const connection = yield* session
  if (yield* tryLock(connection, "pg_try_advisory_lock")) return
  const holders: ReadonlyArray<{ readonly mode: string; readonly addr: string | null }> = yield* connection.execute(
    `SELECT l.mode, host(a.client_addr) AS addr FROM pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
     WHERE l.locktype = 'advisory' AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
       AND l.classid = $1 AND l.objid = $2 AND l.objsubid = 2 AND l.granted`,
    key,
    undefined
  )
  if (holders.some((h) => h.mode === "ExclusiveLock")) {
    return yield* new ReplayLocked({ message: "another replay is running on this database; wait for it to end" })
  }
  const from = [...new Set(holders.map((h) => h.addr ?? "a local socket"))].join(", ")
  return yield* new ReplayLocked({
    message: `the service is running on this database (${holders.length} node(s), from ${from || "unknown"}); stop it before replaying`
  })
})
