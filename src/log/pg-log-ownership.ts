import type { PgClient } from "@effect/sql-pg"
import { Deferred, Effect, Fiber, Option, type Scope } from "effect"
import { type Holder, planShare, type SharePlan } from "./pg-log-share.ts"
import { range } from "./partitions.ts"

/** First key of the session advisory locks that say which node owns which partition. */
const LOCK_NAME = "signal-engine:signal_log"
/** A lock every node's lock session holds (shared), so the live nodes can be counted in pg_locks. */
const MEMBER_LOCK = "signal-engine:signal_log:members"
/** How often a node looks who holds what (a dead node's locks go with its session, a new node's appear). */
const ROUND_MILLIS = 2_000
/** The same while partitions are on their way to this node: it takes them as soon as they are let go. */
const AWAIT_MILLIS = 250
/** How long a partition let go of may take to finish its batch before its consumer is interrupted. */
const HANDOVER_GRACE = "5 seconds"

/** The partition consumer this node runs for a partition it holds the lock of. */
export interface PartitionConsumer {
  readonly fiber: Fiber.Fiber<void>
  /** Asks it to stop after its current batch (its handler's `revoked` then runs). */
  readonly stop: () => void
}

/**
 * Who holds what, in this database: every granted lock of a lock session, the member lock
 * included (as partition -1). Both keys are int4 (`hashtext`), stored as oid: cast the same way.
 */
const HELD = `
  SELECT l.pid, CASE WHEN l.classid = hashtext($2)::oid THEN -1 ELSE l.objid::int4 END AS p
  FROM pg_locks l
  WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 2
    AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND l.classid IN (hashtext($1)::oid, hashtext($2)::oid)`

/** Tries the free partitions in order and stops once it has won `$3` (a scan with a limit stops there). */
const TAKE = "SELECT p FROM unnest($2::int4[]) AS p WHERE pg_try_advisory_lock(hashtext($1), p) LIMIT $3"

const RELEASE = "SELECT pg_advisory_unlock(hashtext($1), p) FROM unnest($2::int4[]) AS p"

/** The other lock sessions and what they hold, and the partitions nobody holds. */
const picture = (rows: ReadonlyArray<{ readonly pid: number; readonly p: number }>, me: number, partitions: number) => {
  const holders = new Map<number, { id: number; owned: number; rebalances: boolean }>()
  const held = new Set<number>()
  for (const { pid, p } of rows) {
    if (p >= partitions) continue
    let h = holders.get(pid)
    if (h === undefined) holders.set(pid, h = { id: pid, owned: 0, rebalances: false })
    if (p < 0) h.rebalances = true
    else {
      h.owned++
      held.add(p)
    }
  }
  holders.delete(me)
  return { others: [...holders.values()] as ReadonlyArray<Holder>, free: range(partitions).filter((p) => !held.has(p)) }
}

const sorted = (ps: Iterable<number>) => [...ps].sort((a, b) => a - b).join(",")

/** What a lock session is given by PgLog's consumer. */
export interface LockSessionOptions {
  readonly sql: PgClient.PgClient
  readonly partitions: number
  /** Starts the consumer of a partition just won. */
  readonly start: (partition: number) => Effect.Effect<PartitionConsumer, never, Scope.Scope>
  /** Told this node's share after every round; none while it has none to speak of. */
  readonly publish: (share: Option.Option<ReadonlySet<number>>) => void
  /** Completed after the first round (or when the session ended before it). */
  readonly started: Deferred.Deferred<void>
}

/**
 * One lock session: a reserved connection whose advisory locks are this node's partitions, and
 * which holds the member lock while it lives. Each round it looks at every session's locks and
 * plans its share (src/log/pg-log-share.ts): it takes free partitions up to its share, and lets
 * go of those past it that another node lacks, each after its consumer has stopped (revoked, its
 * folds committed), so the next owner resumes where it left off. `publish` is told the share
 * after every round: none while partitions are on their way here, and once the session ends.
 * Fails when the connection does; closing it stops the consumers (revoked) and releases the locks
 * before the connection goes back to the pool.
 */
const lockSession = (options: LockSessionOptions) =>
  Effect.gen(function*() {
    const { partitions, publish } = options
    const connection = yield* options.sql.reserve
    const execute = (statement: string, params: ReadonlyArray<unknown>) => connection.execute(statement, params, undefined)
    // Runs after the partition fibers below have stopped (finalizers run in reverse order).
    yield* Effect.addFinalizer(() => Effect.ignore(execute("SELECT pg_advisory_unlock_all()", [])))
    yield* Effect.addFinalizer(() => Effect.sync(() => publish(Option.none())))
    const owned = new Map<number, PartitionConsumer>()
    const self: ReadonlyArray<{ readonly pid: number }> = yield* execute(
      "SELECT pg_backend_pid() AS pid, pg_advisory_lock_shared(hashtext($1), 0)",
      [MEMBER_LOCK]
    )
    const pid = self[0]!.pid

    /** Stops the consumers of `leaving` (at the end of a batch, or interrupted after the grace), then unlocks them. */
    const release = (leaving: ReadonlyArray<number>) =>
      Effect.gen(function*() {
        const consumers = leaving.map((p) => owned.get(p)!)
        for (const p of leaving) owned.delete(p)
        for (const c of consumers) c.stop()
        yield* Effect.forEach(consumers, (c) =>
          Fiber.await(c.fiber).pipe(
            Effect.timeoutOption(HANDOVER_GRACE),
            Effect.flatMap(Option.match({ onNone: () => Fiber.interrupt(c.fiber), onSome: () => Effect.void }))
          ), { concurrency: "unbounded", discard: true })
        yield* execute(RELEASE, [LOCK_NAME, leaving])
      })

    const take = (free: ReadonlyArray<number>, count: number) =>
      Effect.gen(function*() {
        const rows: ReadonlyArray<{ readonly p: number }> = yield* execute(TAKE, [LOCK_NAME, free, count])
        for (const { p } of rows) owned.set(p, yield* options.start(p))
        return rows.map((r) => r.p)
      })

    /** One round: the picture, the plan, and the one move it asks for (take, or let go). */
    const round = Effect.gen(function*() {
      const { others, free } = picture(yield* execute(HELD, [LOCK_NAME, MEMBER_LOCK]), pid, partitions)
      const plan: SharePlan = planShare(partitions, free.length, { id: pid, owned: owned.size }, others)
      const leaving = [...owned.keys()].sort((a, b) => b - a).slice(0, plan.release)
      const won = plan.take > 0 ? yield* take(free, plan.take) : []
      if (leaving.length > 0) yield* release(leaving)
      if (won.length > 0 || leaving.length > 0) {
        yield* Effect.logInfo(
          `PgLog: now owns partitions ${sorted(owned.keys()) || "none"} (share ${plan.share} of ${partitions}, ` +
            `${plan.members} node${plan.members === 1 ? "" : "s"}${leaving.length > 0 ? `; let go of ${sorted(leaving)}` : ""})`
        )
      }
      publish(plan.awaiting ? Option.none() : Option.some(new Set(owned.keys())))
      return plan
    })

    for (;;) {
      const plan = yield* round
      yield* Deferred.succeed(options.started, undefined)
      yield* Effect.sleep(plan.awaiting ? AWAIT_MILLIS : ROUND_MILLIS)
    }
  })

/**
 * Lock sessions one after another, for as long as it runs: a session that ends (its connection
 * lost) has released its partitions, and the next one, a second later, wins its share again.
 */
export const holdPartitions = (options: LockSessionOptions): Effect.Effect<never> =>
  lockSession(options).pipe(
    Effect.scoped,
    Effect.catchCause((cause) =>
      Effect.logWarning("PgLog: partition lock session ended; its partitions were released. Reconnecting", cause)
        .pipe(
          Effect.andThen(Deferred.succeed(options.started, undefined)),
          Effect.andThen(Effect.sleep("1 second"))
        )
    ),
    Effect.forever
  )
