import { Clock, Config, Duration, Effect, Layer, Schedule, Schema } from "effect"
import { AuditLog } from "./audit-repo.ts"

/**
 * The audit log's retention: entries older than AUDIT_RETENTION_DAYS (default 365, at least 1)
 * are deleted at start and then every AUDIT_PURGE_INTERVAL (default 1 hour), by every node (the
 * purge is one idempotent statement). This is the only deletion the table's trigger lets through.
 */
export const AuditRetention = Layer.effectDiscard(
  Effect.gen(function*() {
    const audit = yield* AuditLog
    const days = yield* Config.schema(Schema.Int.check(Schema.isGreaterThanOrEqualTo(1)), "AUDIT_RETENTION_DAYS").pipe(
      Config.withDefault(365)
    )
    const every = yield* Config.Duration("AUDIT_PURGE_INTERVAL").pipe(Config.withDefault(Duration.hours(1)))
    const purge = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const purged = yield* audit.purge(new Date(now - days * 86_400_000))
      if (purged > 0) yield* Effect.logInfo(`audit log: ${purged} entries older than ${days} days purged`)
    }).pipe(Effect.catchCause((cause) => Effect.logWarning("audit log: the retention purge failed; the next one will try again", cause)))
    yield* Effect.forkScoped(Effect.repeat(purge, Schedule.spaced(every)))
  })
)
