import { Context, Deferred, Duration, Effect, Layer, Option } from "effect"

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

/** How long a verdict stays answerable after its batch committed (a forwarded wait may come late). */
const recentFor = Duration.seconds(30)

/**
 * Requests waiting for their signal to be processed, by signal id. A partition worker completes
 * a batch's verdicts after the batch's transaction commits; verdicts are also kept for a short
 * while, so a wait that arrives after the fact (forwarded from another node) still gets one.
 */
export class VerdictRegistry extends Context.Service<VerdictRegistry, {
  readonly register: (signalId: string) => Effect.Effect<Deferred.Deferred<Verdict>>
  readonly complete: (verdicts: ReadonlyArray<Verdict>) => Effect.Effect<void>
  readonly forget: (signalId: string) => Effect.Effect<void>
  /** The verdict of a signal, waiting up to `timeout` for it. */
  readonly await: (signalId: string, timeout: Duration.Input) => Effect.Effect<Option.Option<Verdict>>
}>()("signal-engine/engine/VerdictRegistry") {
  static readonly layer = Layer.sync(VerdictRegistry, () => {
    const waiting = new Map<string, Deferred.Deferred<Verdict>>()
    const recent = new Map<string, { readonly verdict: Verdict; readonly at: number }>()
    const keepMs = Duration.toMillis(recentFor)

    const register = (signalId: string) =>
      Effect.sync(() => {
        const existing = waiting.get(signalId)
        if (existing) return existing
        const deferred = Deferred.makeUnsafe<Verdict>()
        waiting.set(signalId, deferred)
        return deferred
      })

    const forget = (signalId: string) => Effect.sync(() => void waiting.delete(signalId))

    return VerdictRegistry.of({
      register,
      forget,
      complete: (verdicts) =>
        Effect.sync(() => {
          const now = Date.now()
          for (const [id, entry] of recent) {
            if (now - entry.at <= keepMs) break
            recent.delete(id)
          }
          for (const verdict of verdicts) {
            recent.set(verdict.signal_id, { verdict, at: now })
            const deferred = waiting.get(verdict.signal_id)
            if (deferred) {
              waiting.delete(verdict.signal_id)
              Deferred.doneUnsafe(deferred, Effect.succeed(verdict))
            }
          }
        }),
      await: (signalId, timeout) =>
        Effect.suspend(() => {
          const known = recent.get(signalId)
          if (known) return Effect.succeedSome(known.verdict)
          return Effect.flatMap(register(signalId), (deferred) =>
            Deferred.await(deferred).pipe(
              Effect.timeoutOption(timeout),
              Effect.ensuring(Effect.suspend(() => (Deferred.isDoneUnsafe(deferred) ? Effect.void : forget(signalId))))
            ))
        })
    })
  })
}
