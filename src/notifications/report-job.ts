import { Clock, Config, Duration, Effect, Layer, Schedule } from "effect"
import { claimDueReports } from "../store/report-claim.ts"

/**
 * The scheduled-report job, on every node: every REPORT_POLL_INTERVAL (default 1 minute) it takes
 * the schedules due by the Clock's time and queues their reports, until none is left. Nodes share
 * the work through SKIP LOCKED; a node that stops mid-transaction leaves the schedule due for the
 * next poll of any node, and the channel outbox (NotificationDispatcher) delivers with retries.
 */
export const ReportJob = Layer.effectDiscard(
  Effect.gen(function*() {
    const every = yield* Config.Duration("REPORT_POLL_INTERVAL").pipe(Config.withDefault(Duration.minutes(1)))
    const round = Effect.gen(function*() {
      for (;;) {
        const now = new Date(yield* Clock.currentTimeMillis)
        const taken = yield* claimDueReports(now)
        if (taken > 0) yield* Effect.logInfo(`scheduled reports: ${taken} queued`)
        if (taken === 0) return
      }
    }).pipe(Effect.catchCause((cause) => Effect.logWarning("scheduled reports: a round failed; the next one will try again", cause)))
    yield* Effect.forkScoped(Effect.repeat(round, Schedule.spaced(every)))
  })
)
