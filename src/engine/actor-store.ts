import { Effect } from "effect"
import type { SignalRecord } from "../domain/records.ts"
import { noRecipients } from "../domain/recipients.ts"
import { makeScopeKeys } from "../domain/scope-usage.ts"
import { timeoutDue } from "../domain/user-fold.ts"
import { emptyUserState, type UserState } from "../domain/user-state.ts"
import type { Projections } from "../store/projections.ts"
import type { PartitionOwnership } from "./partition-ownership.ts"
import type { Timer } from "./partition-worker-options.ts"
import { makeTimerIndex } from "./timer-index.ts"

/**
 * The actors of one partition: each active user's state in memory (loaded lazily from its
 * snapshot, evicted when idle and committed, so memory follows active users, not all users), the
 * inactivity timers of their open sessions, and the scope keys of their last signal.
 */
export interface ActorStore {
  /** The states of `users`: in memory, else from their snapshot, else empty. */
  readonly statesOf: (users: ReadonlyArray<string>) => Effect.Effect<Map<string, UserState>>
  /** Takes folded states as the actors' own; `savedBy` is the write that carries them. */
  readonly put: (states: ReadonlyMap<string, UserState>, now: number, savedBy: number) => void
  /** Drops every actor (another owner moved the partition on: their states are stale). */
  readonly forgetAll: () => void
  /** Drops actors idle for longer than `idleMs` whose state is committed (write `committedSeq` done). */
  readonly evictIdle: (now: number, idleMs: number, committedSeq: number) => void
  /** The states held back from snapshots (`deferSnapshots`), to write at a flush. */
  readonly unsaved: () => ReadonlyArray<{ readonly user_id: string; readonly state: UserState }>
  readonly saved: (users: ReadonlyArray<string>) => void
  /** The scope keys of a signal, reused from its user's last while they still apply. */
  readonly scopeKeysOf: (record: SignalRecord, project: string | null) => ReadonlyArray<string>
  /** Timers due at `now`, removed: the caller appends their ticks. */
  readonly takeDue: (now: number) => ReadonlyArray<Timer>
  /** A tick that could not be appended is retried on the next sweep. */
  readonly restore: (timer: Timer) => void
  readonly size: () => number
  readonly timerCount: () => number
}

export const makeActorStore = Effect.fnUntraced(function*(
  projections: Projections["Service"],
  partition: number,
  options: { readonly timers: boolean; readonly deferSnapshots: boolean }
) {
  const actors = new Map<string, { state: UserState; touchedAt: number; savedBy: number }>()
  /** Actors whose state is newer than their snapshot (deferSnapshots only). */
  const unsaved = new Set<string>()
  /** The running inactivity timers, by user (a user has a timer per open session). */
  const timers = makeTimerIndex<Timer>()
  const scopeKeys = makeScopeKeys()

  const trackTimers = (userId: string, state: UserState) => {
    if (!options.timers) return
    timers.set(
      userId,
      Object.values(state.open).map((session) => ({
        userId,
        orgId: session.org_id,
        environment: session.environment,
        sessionId: session.id,
        lastActivityAt: session.last_activity_at,
        due: timeoutDue(session)
      }))
    )
  }
  if (options.timers) {
    for (const snapshot of yield* projections.actorsWithOpenSessions(partition)) trackTimers(snapshot.user_id, snapshot.state)
  }

  const store: ActorStore = {
    statesOf: (users) =>
      Effect.map(projections.loadActors(users.filter((u) => !actors.has(u))), (loaded) => {
        const states = new Map<string, UserState>()
        for (const u of users) states.set(u, actors.get(u)?.state ?? loaded.get(u) ?? emptyUserState)
        return states
      }),
    put: (states, now, savedBy) => {
      for (const [u, state] of states) {
        actors.set(u, { state, touchedAt: now, savedBy })
        trackTimers(u, state)
        if (options.deferSnapshots) unsaved.add(u)
      }
    },
    forgetAll: () => {
      actors.clear()
      scopeKeys.clear()
      unsaved.clear()
    },
    evictIdle: (now, idleMs, committedSeq) => {
      for (const [u, actor] of actors) {
        if (now - actor.touchedAt > idleMs && actor.savedBy <= committedSeq && !unsaved.has(u)) {
          actors.delete(u)
          scopeKeys.forget(u)
        }
      }
    },
    unsaved: () => [...unsaved].map((u) => ({ user_id: u, state: actors.get(u)!.state })),
    saved: (users) => users.forEach((u) => unsaved.delete(u)),
    scopeKeysOf: scopeKeys.keysOf,
    takeDue: (now) => timers.takeDue(now),
    restore: (timer) => timers.set(timer.userId, [...timers.get(timer.userId).filter((t) => t.sessionId !== timer.sessionId), timer]),
    size: () => actors.size,
    timerCount: timers.size
  }
  return store
})

/**
 * Commits what is folded, with the states `deferSnapshots` held back (a replay's), and waits for
 * it; another owner moving the offset meanwhile is a defect of the replay.
 */
export const flushSnapshots = (actors: ActorStore, hold: PartitionOwnership, partition: number): Effect.Effect<void> =>
  Effect.suspend(() => {
    const unsaved = actors.unsaved()
    const behind = hold.writer()
    const write = unsaved.length === 0 ? Effect.void : behind.add({
      nextOffset: hold.next(),
      sessions: [],
      events: [],
      notices: [],
      recipients: noRecipients,
      actors: unsaved.map((a) => ({ user_id: a.user_id, partition, state: a.state })),
      goals: [],
      scopeUsage: [],
      watch: []
    }, 0)
    return Effect.andThen(write, behind.settle).pipe(Effect.flatMap(() =>
      behind.fencedAt() !== undefined
        ? Effect.die(`partition ${partition}: another owner moved the offset during a replay`)
        : Effect.sync(() => actors.saved(unsaved.map((a) => a.user_id)))
    ))
  })
