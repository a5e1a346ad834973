import { Clock, Effect, Latch, Schedule } from "effect"
import { type KafkaClient, quietAdmin } from "./kafka-client.ts"

/** How often the cluster is asked whether it answers. */
const PROBE_EVERY = "250 millis"
/** A probe not answered by then counts as failed (a broker that accepts connections but hangs). */
const PROBE_TIMEOUT = "1 second"
/**
 * Failed probes in a row that make the cluster "down". Two, so that one lost request (a seed broker
 * restarting in a larger cluster, a pause of the event loop) does not refuse appends: a broker
 * that stopped is known within ~0.5 s.
 */
const DOWN_AFTER = 2

/**
 * Whether this node can reach the Kafka cluster, probed a few times a second on a client of its
 * own without retries (kafkajs's own retries hold a failing request for seconds). The producer
 * refuses appends at once while the cluster is down, waiters of appends in flight are released
 * when it goes down, readiness follows it, and the consumer restarts once it is up again.
 */
export interface BrokerWatch {
  readonly isDown: () => boolean
  /** Completes when the cluster is (or goes) down. */
  readonly down: Effect.Effect<void>
  /** Completes when the cluster answers (again). */
  readonly up: Effect.Effect<void>
  /** When the current outage began (epoch ms), if there is one. */
  readonly downSince: () => number | undefined
}

export const watchBrokers = ({ settings }: KafkaClient) =>
  Effect.gen(function*() {
    const admin = yield* quietAdmin(settings, "probe", { connectionTimeout: 1_000, requestTimeout: 1_000 })
    const upLatch = yield* Latch.make(true)
    const downLatch = yield* Latch.make(false)
    let since: number | undefined
    let failures = 0

    const probe = Effect.tryPromise(async () => {
      await admin.connect()
      await admin.describeCluster()
    }).pipe(Effect.timeout(PROBE_TIMEOUT), Effect.result)

    const step = Effect.gen(function*() {
      const answered = (yield* probe)._tag === "Success"
      if (answered) {
        failures = 0
        if (since === undefined) return
        const now = yield* Clock.currentTimeMillis
        yield* Effect.logInfo(`KafkaLog: the cluster answers again after ${((now - since) / 1000).toFixed(1)} s`)
        since = undefined
        yield* downLatch.close
        yield* upLatch.open
        return
      }
      failures++
      if (since !== undefined || failures < DOWN_AFTER) return
      since = yield* Clock.currentTimeMillis
      yield* Effect.logWarning("KafkaLog: the cluster does not answer; appends are refused until it does")
      yield* upLatch.close
      yield* downLatch.open
    })
    yield* Effect.forkScoped(Effect.repeat(step, Schedule.spaced(PROBE_EVERY)))

    return {
      isDown: () => since !== undefined,
      down: downLatch.await,
      up: upLatch.await,
      downSince: () => since
    } satisfies BrokerWatch
  })
