import { randomUUID } from "node:crypto"
import { createRequire } from "node:module"
import { Kafka, logLevel } from "kafkajs"
import { afterAll, describe, expect, inject, it } from "vitest"
import { patchKafkajs } from "../../src/log/kafkajs-patches.ts"

const require = createRequire(import.meta.url)
const RequestQueue = require("kafkajs/src/network/requestQueue/index.js") as {
  prototype: { checkPendingRequests: () => void }
}

const installed = patchKafkajs()

// Every check of a connection's pending requests, counted.
let checks = 0
const check = RequestQueue.prototype.checkPendingRequests
RequestQueue.prototype.checkPendingRequests = function(this: unknown) {
  checks++
  return check.call(this)
}

const warnings: Array<string> = []
process.on("warning", (w) => warnings.push(w.name))

const kafka = new Kafka({ clientId: "request-queue", brokers: inject("kafkaBrokers").split(","), logLevel: logLevel.ERROR })
const topic = `request-queue-${randomUUID()}`
const admin = kafka.admin()
// One request in flight per connection: concurrent sends queue as pending requests.
const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 })

afterAll(async () => {
  await producer.disconnect().catch(() => undefined)
  await admin.deleteTopics({ topics: [topic] }).catch(() => undefined)
  await admin.disconnect().catch(() => undefined)
})

describe("kafkajs (patched)", () => {
  // The broker checks each record batch's CRC-32C and refuses a wrong one ("failed its CRC
  // checksum"), so every produce here also checks the replaced checksum.
  it("sends requests that had to wait, and an idle connection stops checking for them", { timeout: 60_000 }, async () => {
    expect(installed).toEqual({ requestQueue: true, crc32c: true })
    await admin.connect()
    await admin.createTopics({ topics: [{ topic, numPartitions: 1 }], waitForLeaders: true })
    await producer.connect()
    const sends = Array.from({ length: 20 }, (_, i) => producer.send({ topic, acks: -1, messages: [{ key: "k", value: String(i) }] }))
    expect((await Promise.all(sends)).flat().every((r) => r.errorCode === 0)).toBe(true)
    const offsets = await admin.fetchTopicOffsets(topic)
    expect(offsets[0]?.high).toBe("20")

    // A rate, so it is counted over a period: one second, from a moment after the last answers.
    await new Promise((r) => setTimeout(r, 200))
    checks = 0
    await new Promise((r) => setTimeout(r, 1_000))
    // Unpatched, each of the open connections checks every millisecond: hundreds in a second.
    expect(checks).toBeLessThan(20)
    expect(warnings).not.toContain("TimeoutNegativeWarning")
  })
})
