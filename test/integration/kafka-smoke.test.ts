// Smoke test against a real broker (see infra/kafka/start.sh): topic admin,
// idempotent keyed produce, consumer-group consume from the beginning.
import { randomUUID } from "node:crypto"
import { connect } from "node:net"
import { Kafka, logLevel } from "kafkajs"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"

const brokers = inject("kafkaBrokers").split(",")
const kafka = new Kafka({ clientId: "kafka-smoke", brokers, logLevel: logLevel.ERROR })
const topic = `smoke-${randomUUID()}`
const admin = kafka.admin()
const producer = kafka.producer({ idempotent: true, maxInFlightRequests: 1 })
const consumer = kafka.consumer({ groupId: `${topic}-group` })
let reachable = false
const sent = ["a", "b", "c", "d", "e"].flatMap((key) => [1, 2, 3].map((n) => ({ key, value: `${key}-${n}` })))

interface Seen {
  key: string
  value: string
  partition: number
}

// kafkajs retries a refused connection for ~20 s; say what is wrong at once.
beforeAll(async () => {
  const [host = "", port = ""] = (brokers[0] ?? "").split(":")
  await new Promise<void>((resolve, reject) => {
    const socket = connect({ host, port: Number(port) }, () => {
      socket.end()
      resolve()
    })
    socket.on("error", () => reject(new Error(`no Kafka broker at ${brokers[0]}; is it running?`)))
  })
  reachable = true
  await admin.connect()
})

afterAll(async () => {
  if (!reachable) return // cleanup would only retry connecting
  await consumer.disconnect()
  await producer.disconnect()
  await admin.deleteTopics({ topics: [topic] }).catch(() => undefined)
  await admin.disconnect()
})

describe("kafka smoke", () => {
  it("round-trips keyed records through a 3-partition topic", { timeout: 60_000 }, async () => {
    expect(await admin.createTopics({ topics: [{ topic, numPartitions: 3 }], waitForLeaders: true })).toBe(true)
    const metadata = await admin.fetchTopicMetadata({ topics: [topic] })
    expect(metadata.topics[0]?.partitions).toHaveLength(3)

    await producer.connect()
    const acks = await producer.send({ topic, acks: -1, messages: sent })
    expect(acks.every((r) => r.errorCode === 0)).toBe(true)

    const seen: Seen[] = []
    await consumer.connect()
    await consumer.subscribe({ topics: [topic], fromBeginning: true })
    await new Promise<void>((resolve, reject) => {
      consumer
        .run({
          eachMessage: async ({ partition, message }) => {
            seen.push({ key: message.key?.toString() ?? "", value: message.value?.toString() ?? "", partition })
            if (seen.length === sent.length) resolve()
          }
        })
        .catch(reject)
    })

    const byValue = (x: { value: string }, y: { value: string }) => x.value.localeCompare(y.value)
    expect(seen.map(({ key, value }) => ({ key, value })).sort(byValue)).toEqual(sent)
    // Same key, same partition; order is only guaranteed within a partition.
    const partitionsOf = new Map<string, Set<number>>()
    for (const { key, partition } of seen) partitionsOf.set(key, (partitionsOf.get(key) ?? new Set<number>()).add(partition))
    for (const [key, partitions] of partitionsOf) {
      expect(partitions.size, `partitions of key ${key}`).toBe(1)
      expect(seen.filter((s) => s.key === key).map((s) => s.value)).toEqual([1, 2, 3].map((n) => `${key}-${n}`))
    }
    // Five keys hash onto more than one of the three partitions (murmur2, as Java clients do).
    expect(new Set(seen.map((s) => s.partition)).size).toBeGreaterThan(1)
  })
})
