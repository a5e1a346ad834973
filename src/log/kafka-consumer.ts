import { Cause, Effect, FiberSet, Option, type Scope } from "effect"
import type { BrokerWatch } from "./broker-watch.ts"
import { makeGroupAssignment } from "./kafka-assignment.ts"
import { makePartitionBatches } from "./kafka-batches.ts"
import type { KafkaClient } from "./kafka-client.ts"
import { runIncarnations } from "./kafka-incarnation.ts"
import { Metrics } from "../observability/metrics.ts"
import type { LocalRecords } from "./local-records.ts"
import type { LogConsumer, PartitionHandler } from "./signal-log.ts"

/**
 * KafkaLog's `run` and `assignment`. The consumer group only shares partitions between nodes:
 * offsets live in PostgreSQL with the projections (the handler's `assigned` answers them),
 * nothing is committed to Kafka. Records this node appended (`local`) reach the handler of
 * their partition without a fetch.
 *
 * Its parts: the assignment (src/log/kafka-assignment.ts: which partitions are ours, their
 * (re)assignment), the per-batch step (kafka-batches.ts: records → handler → resolved offset)
 * and the consumer's incarnations (kafka-incarnation.ts: started again after a crash).
 */
export const makeKafkaConsumer = (client: KafkaClient, local: LocalRecords, watch: BrokerWatch): LogConsumer => {
  const { topic, partitions } = client.settings

  /**
   * The partitions the consumer group gave this node in its latest join; none while it is not a
   * member (starting, or its consumer stopped): readiness tells "owns nothing yet" from "owns
   * nothing because the others own everything".
   */
  let membership: ReadonlySet<number> | undefined

  const run = (handler: PartitionHandler): Effect.Effect<void, never, Scope.Scope> =>
    Effect.gen(function*() {
      const runPromise = yield* FiberSet.makeRuntimePromise<never>()
      const background = (effect: Effect.Effect<void>) =>
        void runPromise(effect.pipe(
          Effect.catchCause((cause) => Cause.hasInterruptsOnly(cause) ? Effect.void : Effect.logError("KafkaLog: rebalance handling failed", cause))
        )).catch(() => undefined)
      const assignment = yield* makeGroupAssignment({
        topic,
        partitions,
        handler,
        publish: (latest) => void (membership = latest)
      })
      const batches = makePartitionBatches(handler, assignment, local, (yield* Metrics).verdictStages.fetch)
      const detach = local.attach({
        owns: assignment.consuming,
        ready: (partition) => background(batches.appended(partition))
      })
      yield* Effect.addFinalizer(() => Effect.sync(detach))
      yield* runIncarnations({ client, watch, assignment, batches, runPromise, background })
    })

  return { run, assignment: Effect.sync(() => Option.fromUndefinedOr(membership)) }
}
