import { ConfigProvider, Effect, Layer } from "effect"
import { randomBytes } from "node:crypto"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { KafkaLog } from "../../src/log/kafka-log.ts"
import { LogIdentityGuard } from "../../src/log/log-identity.ts"
import { type LogEntry, SignalLog } from "../../src/log/signal-log.ts"
import { type KafkaProxy, startKafkaProxy } from "../support/kafka-proxy.ts"
import { signalRecord } from "../support/log-records.ts"
import { type OwnKafka, startOwnKafka } from "../support/own-kafka.ts"
import { freePort } from "../support/ports.ts"

const anyLog = Layer.succeed(LogIdentityGuard, LogIdentityGuard.of({ admit: () => Effect.void, adoptAdmitted: Effect.succeed(undefined) }))

/**
 * An append whose answer is lost on the way back (the broker wrote it; the connection was cut
 * and stayed refused past kafkajs's retries): the caller is told the outcome is unknown, and the
 * appends after the broker is reachable again are written and answered with their own offsets.
 * With the producer kept, kafkajs reuses the lost batch's sequence numbers: a batch of the same
 * length is taken by the broker for a retry of it (answered, not written), another length is
 * refused for good.
 */
describe("KafkaLog after an append's answer is lost", () => {
  // One broker behind one proxy for both cases (each a topic of its own): a broker's start is the costly part.
  let proxy: KafkaProxy
  let kafka: OwnKafka
  let proxyPort: number
  beforeAll(async () => {
    const brokerPort = await freePort()
    proxyPort = await freePort()
    proxy = await startKafkaProxy(proxyPort, brokerPort)
    kafka = await startOwnKafka({ port: brokerPort, advertisedPort: proxyPort })
  }, 120_000)
  afterAll(async () => {
    await proxy?.close()
    await kafka?.remove()
  })

  /** Appends 1 record, then 1 whose answer is lost, then `after` records once the broker is reachable again. */
  const scenario = async (after: number) => {
    const id = randomBytes(6).toString("hex")
    const config = ConfigProvider.layer(ConfigProvider.fromEnv({
      env: { KAFKA_BROKERS: `127.0.0.1:${proxyPort}`, KAFKA_TOPIC: `lost-answer-${id}`, KAFKA_GROUP_ID: `lost-answer-${id}`, LOG_PARTITIONS: "1" }
    }))
    const user = `usr_${id}`
    const records = (from: number, n: number) => Array.from({ length: n }, (_, i) => signalRecord(user, from + i))
    return Effect.runPromise(
      Effect.scoped(Effect.gen(function*() {
        const log = yield* SignalLog
        yield* log.append(records(1, 1))
        // The answer of the next append is lost, and the broker refused for 15 s (past kafkajs's retries).
        const lost = proxy.loseNextProduceAnswer(15_000)
        const unknown = yield* Effect.result(log.append(records(2, 1)))
        yield* Effect.promise(() => lost)
        // Back: appended until the log takes it (each failure is an unknown outcome, sent again).
        const next = yield* Effect.eventually(log.append(records(3, after)).pipe(Effect.tapError(() => Effect.sleep("500 millis")))).pipe(
          Effect.timeout("40 seconds")
        )
        const entries: Array<LogEntry> = []
        yield* log.readPartition(0, 0, (batch) => Effect.sync(() => void entries.push(...batch)))
        return {
          unknown: unknown._tag,
          offsets: next.map((r) => r.offset),
          written: entries.map((e) => (e.record as { signal_id: string }).signal_id),
          expected: records(1, 2 + after).map((r) => r.signal_id)
        }
      })).pipe(Effect.provide(KafkaLog.layer.pipe(Layer.provide(anyLog), Layer.provide(config))))
    )
  }

  it("writes an append of the lost one's length, answered with its own offset", { timeout: 180_000 }, async () => {
    const { unknown, offsets, written, expected } = await scenario(1)
    expect(unknown).toBe("Failure")
    // The lost append was written (only its answer was lost), and the next one too, once each.
    expect(written).toEqual(expected)
    expect(offsets).toEqual([2])
  })

  it("writes an append of another length", { timeout: 180_000 }, async () => {
    const { unknown, offsets, written, expected } = await scenario(3)
    expect(unknown).toBe("Failure")
    expect(written).toEqual(expected)
    expect(offsets).toEqual([2, 3, 4])
  })
})
