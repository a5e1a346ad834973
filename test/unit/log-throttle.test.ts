import { Effect, Logger } from "effect"
import { describe, expect, it } from "vitest"
import { throttleRepeats } from "../../src/observability/log-throttle.ts"

describe("the service's log", () => {
  it("writes a repeated warning or error once per 10 s with the count of the rest; info passes", () => {
    const lines: Array<string> = []
    const capture = Logger.make(({ logLevel, message }) => void lines.push(`${logLevel} ${(message as ReadonlyArray<unknown>).join(" ")}`))
    const logger = throttleRepeats(capture)
    let now = 1_000_000
    const at = <A>(ms: number, effect: Effect.Effect<A>) => {
      now = 1_000_000 + ms
      return effect
    }
    const log = (effect: Effect.Effect<void>) =>
      Effect.runSync(effect.pipe(Effect.provide(Logger.layer([Logger.make((o) => logger.log({ ...o, date: new Date(now) }))]))))
    for (let i = 0; i < 30; i++) log(at(i * 100, Effect.logError("kafkajs Connection: connect ECONNREFUSED 127.0.0.1:9092")))
    log(at(3_000, Effect.logWarning("webhook dispatcher round failed")))
    log(at(3_100, Effect.logInfo("partition 1 assigned")))
    log(at(3_200, Effect.logInfo("partition 1 assigned")))
    log(at(3_300, Effect.logWarning("webhook dispatcher round failed")))
    log(at(10_500, Effect.logError("kafkajs Connection: connect ECONNREFUSED 127.0.0.1:9092")))
    log(at(25_000, Effect.logWarning("webhook dispatcher round failed")))
    expect(lines).toEqual([
      "Error kafkajs Connection: connect ECONNREFUSED 127.0.0.1:9092",
      "Warn webhook dispatcher round failed",
      "Info partition 1 assigned",
      "Info partition 1 assigned",
      "Error kafkajs Connection: connect ECONNREFUSED 127.0.0.1:9092 (and 29 more like it in the last 11 s)",
      "Warn webhook dispatcher round failed (and 1 more like it in the last 22 s)"
    ])
  })
})
