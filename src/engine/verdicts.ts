import { Context, Deferred, Effect, Layer } from "effect"

/** What the engine answers about one signal once its actor has processed it. */
export interface Verdict {
  readonly ok: boolean
  readonly signal_id: string
  readonly session_id: string
}

/**
 * Requests waiting for their signal to be processed, by signal id. A partition worker completes
 * the entries of a batch after the batch's transaction commits; a request that stops waiting
 * (timeout, client gone) removes its entry.
 */
export class VerdictRegistry extends Context.Service<VerdictRegistry, {
  readonly register: (signalId: string) => Effect.Effect<Deferred.Deferred<Verdict>>
  readonly complete: (verdicts: ReadonlyArray<Verdict>) => Effect.Effect<void>
  readonly forget: (signalId: string) => Effect.Effect<void>
}>()("signal-engine/engine/VerdictRegistry") {
  static readonly layer = Layer.sync(VerdictRegistry, () => {
    const waiting = new Map<string, Deferred.Deferred<Verdict>>()
    return VerdictRegistry.of({
      register: (signalId) =>
        Effect.map(Deferred.make<Verdict>(), (deferred) => {
          waiting.set(signalId, deferred)
          return deferred
        }),
      complete: (verdicts) =>
        Effect.sync(() => {
          for (const verdict of verdicts) {
            const deferred = waiting.get(verdict.signal_id)
            if (deferred) {
              waiting.delete(verdict.signal_id)
              Deferred.doneUnsafe(deferred, Effect.succeed(verdict))
            }
          }
        }),
      forget: (signalId) => Effect.sync(() => void waiting.delete(signalId))
    })
  })
}
