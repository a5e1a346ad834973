import { Effect, Logger } from "effect"
import { logLevel } from "kafkajs"
import { afterEach, describe, expect, it, vi } from "vitest"
import { kafkajsLogCreator } from "../../src/log/kafkajs-log.ts"

describe("kafkajs's log lines", () => {
  afterEach(() => void vi.useRealTimers())

  it("are logged once per kind and interval while a broker is away, with the count of the rest", () => {
    vi.useFakeTimers({ now: 1_000_000 })
    const lines: Array<string> = []
    const capture = Logger.make(({ message }) => void lines.push(String(Array.isArray(message) ? message[0] : message)))
    const log = kafkajsLogCreator((effect) => Effect.runSync(effect.pipe(Effect.provide(Logger.layer([capture])))))(logLevel.WARN)
    const refused = (port: number) =>
      log({ namespace: "Connection", level: logLevel.ERROR, label: "ERROR", log: { timestamp: "", message: `Connection error: connect ECONNREFUSED 127.0.0.1:${port}` } })
    for (let i = 0; i < 40; i++) refused(9092 + (i % 3))
    log({ namespace: "Consumer", level: logLevel.ERROR, label: "ERROR", log: { timestamp: "", message: "Crash: KafkaJSNonRetriableError" } })
    vi.advanceTimersByTime(4_000)
    for (let i = 0; i < 20; i++) refused(9092)
    vi.advanceTimersByTime(6_000)
    refused(9093)
    expect(lines).toEqual([
      "kafkajs Connection: Connection error: connect ECONNREFUSED 127.0.0.1:9092",
      "kafkajs Consumer: Crash: KafkaJSNonRetriableError",
      "kafkajs Connection: Connection error: connect ECONNREFUSED 127.0.0.1:9093 (and 59 more like it in the last 10 s)"
    ])
  })
})
