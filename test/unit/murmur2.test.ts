import { Partitioners } from "kafkajs"
import { describe, expect, it } from "vitest"
import { murmur2, partitionForKey, toPositive } from "../../src/log/murmur2.ts"

const bytes = (s: string) => new TextEncoder().encode(s)

describe("murmur2 (Kafka's default partitioner)", () => {
  // org.apache.kafka.common.utils.UtilsTest#testMurmur2 (apache/kafka, clients module).
  it.each([
    ["21", -973932308],
    ["foobar", -790332482],
    ["a-little-bit-long-string", -985981536],
    ["a-little-bit-longer-string", -1486304829],
    ["lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8", -58897971],
    ["abc", 479470107]
  ])("murmur2(%j) = %i, as Kafka's UtilsTest", (input, expected) => {
    expect(murmur2(bytes(input))).toBe(expected)
  })

  it("toPositive clears the sign bit, as Kafka's Utils.toPositive", () => {
    expect(toPositive(-2147483648)).toBe(0)
    expect(toPositive(-1)).toBe(2147483647)
    expect(toPositive(5)).toBe(5)
  })

  it("places keys where kafkajs's DefaultPartitioner (Java-compatible) does, for every partition count", () => {
    const kafkajs = Partitioners.DefaultPartitioner()
    const keys = [
      "",
      "a",
      "ab",
      "abc",
      "abcd",
      "usr_01HZX5",
      "grüße-ünïcödé",
      "😀 emoji key",
      ...Array.from({ length: 500 }, (_, i) => `usr_${i.toString(36)}_${"x".repeat(i % 13)}`)
    ]
    for (const partitions of [1, 2, 3, 7, 8, 12, 64]) {
      const partitionMetadata = Array.from({ length: partitions }, (_, partitionId) => ({
        partitionId,
        leader: 0,
        replicas: [0],
        isr: [0],
        offlineReplicas: [],
        partitionErrorCode: 0
      }))
      for (const key of keys) {
        const expected = kafkajs({ topic: "t", partitionMetadata, message: { key, value: null } })
        expect(partitionForKey(key, partitions), `${key} over ${partitions}`).toBe(expected)
      }
    }
  })
})
