import { Duration, Effect, Option, Redacted } from "effect"
import type { Outcome } from "../domain/verdict.ts"
import type { Cluster } from "./cluster.ts"
import type { PendingReason } from "./ingress-answers.ts"

/** The internal route a node answers verdicts of its partitions on (for the proxy path). */
export const internalVerdictPath = (signalId: string) => `/internal/v1/verdicts/${encodeURIComponent(signalId)}`
export const clusterSecretHeader = "x-cluster-secret"

/**
 * The proxy path: the verdict of a signal whose partition another node owns, asked of that node
 * (waiting there up to `wait`). Never fails: an owner that cannot answer leaves the local wait
 * to time out, and notes why in `why`; or, for a signal already blocked at acceptance
 * (`blocked`), ends the wait at once: only its session id was still to come.
 */
export const askOwner = (
  cluster: Cluster["Service"],
  log: string,
  wait: Duration.Duration
) =>
(partition: number, id: string, why: { reason: PendingReason }, blocked: boolean): Effect.Effect<Outcome | undefined> => {
  const giveUp: Effect.Effect<undefined> = blocked ? Effect.undefined : Effect.never
  return Effect.gen(function*() {
    const owner = yield* cluster.ownerOf(log, partition)
    if (Option.isNone(owner) || owner.value.nodeId === cluster.nodeId || Option.isNone(cluster.secret)) {
      // No owner, or this node recorded as the owner of a partition it no longer holds.
      if (Option.isNone(owner) || owner.value.nodeId === cluster.nodeId) why.reason = "no_owner"
      return yield* giveUp
    }
    const secret = Redacted.value(cluster.secret.value)
    const response = yield* Effect.tryPromise((signal) =>
      fetch(`${owner.value.url}${internalVerdictPath(id)}?wait_ms=${Duration.toMillis(wait)}`, {
        headers: { [clusterSecretHeader]: secret },
        signal
      }).then(async (r) => (r.status === 200 ? (await r.json()) as Outcome : undefined))
    ).pipe(Effect.tapError(() => Effect.sync(() => void (why.reason = "forward_failed"))))
    return response ?? (yield* giveUp)
  }).pipe(Effect.catchCause(() => giveUp))
}
