import { PgClient } from "@effect/sql-pg"
import { Effect, type Queue, type Scope } from "effect"
import type { SqlError } from "effect/sql/SqlError"

/** The channel migration 0015's triggers notify on. */
const channel = "signal_engine_principals"

export interface PrincipalChanges {
  /**
   * Notice of every committed change that can alter what a key resolves to (migration 0015), from
   * the moment the database has confirmed the listen: the payload is the changed table's name. The
   * queue fails when its connection is lost.
   */
  readonly principalChanges: Effect.Effect<Queue.Dequeue<{ readonly payload: string }, SqlError>, SqlError, Scope.Scope>
}

export const makePrincipalChanges = Effect.gen(function*() {
  const pg = yield* PgClient.PgClient
  return { principalChanges: pg.listen(channel) } satisfies PrincipalChanges
})
