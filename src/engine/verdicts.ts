import { Context, Deferred, Duration, Effect, Layer, Option } from "effect"
import type { GoalOutcome } from "../domain/goals.ts"

/** What the engine answers about one signal once its actor has processed it. */
export interface Verdict {
  readonly ok: boolean
  readonly signal_id: string
  readonly session_id: string
  /** Where a rule fired: the deciding rule's action (the first block, else the first rule that fired). */
  readonly action?: "block" | "warn" | "log" | "notify"
  readonly rule_id?: string
  readonly message?: string
}

/** What a request waits for: the verdict of a signal, or what a goal command came to. */
export type Outcome = Verdict | GoalOutcome

/** The id a request waits on: the signal id, or the goal command id. */
export const outcomeId = (outcome: Outcome): string => ("signal_id" in outcome ? outcome.signal_id : outcome.command_id)

/** How long a verdict stays answerable after its batch committed (a forwarded wait may come late). */
const recentFor = Duration.seconds(30)

/**
 * Requests waiting for their record to be processed, by signal id (or goal command id). A partition worker completes
 * a batch's verdicts after the batch's transaction commits; verdicts are also kept for a short
 * while, so a wait that arrives after the fact (forwarded from another node) still gets one.
 */
export class VerdictRegistry extends Context.Service<VerdictRegistry, {
  readonly register: (signalId: string) => Effect.Effect<Deferred.Deferred<Outcome>>
  readonly complete: (outcomes: ReadonlyArray<Outcome>) => Effect.Effect<void>
  readonly forget: (signalId: string) => Effect.Effect<void>
  /** The verdict of a signal, waiting up to `timeout` for it. */
  readonly await: (signalId: string, timeout: Duration.Input) => Effect.Effect<Option.Option<Outcome>>
}>()("signal-engine/engine/VerdictRegistry") {
  static readonly layer = Layer.sync(VerdictRegistry, () => {
    const waiting = new Map<string, Deferred.Deferred<Outcome>>()
    const recent = new Map<string, { readonly outcome: Outcome; readonly at: number }>()
    const keepMs = Duration.toMillis(recentFor)

    const register = (signalId: string) =>
      Effect.sync(() => {
        const existing = waiting.get(signalId)
        if (existing) return existing
        const deferred = Deferred.makeUnsafe<Outcome>()
        waiting.set(signalId, deferred)
        return deferred
      })

    const forget = (signalId: string) => Effect.sync(() => void waiting.delete(signalId))

    return VerdictRegistry.of({
      register,
      forget,
      complete: (outcomes) =>
        Effect.sync(() => {
          const now = Date.now()
          for (const [id, entry] of recent) {
            if (now - entry.at <= keepMs) break
            recent.delete(id)
          }
          for (const outcome of outcomes) {
            const id = outcomeId(outcome)
            recent.set(id, { outcome, at: now })
            const deferred = waiting.get(id)
            if (deferred) {
              waiting.delete(id)
              Deferred.doneUnsafe(deferred, Effect.succeed(outcome))
            }
          }
        }),
      await: (signalId, timeout) =>
        Effect.suspend(() => {
          const known = recent.get(signalId)
          if (known) return Effect.succeedSome(known.outcome)
          return Effect.flatMap(register(signalId), (deferred) =>
            Deferred.await(deferred).pipe(
              Effect.timeoutOption(timeout),
              Effect.ensuring(Effect.suspend(() => (Deferred.isDoneUnsafe(deferred) ? Effect.void : forget(signalId))))
            ))
        })
    })
  })
}
