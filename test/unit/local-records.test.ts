import { describe, expect, it } from "vitest"
import type { SignalRecord } from "../../src/domain/records.ts"
import { makeLocalRecords } from "../../src/log/local-records.ts"
import { serializeRecord } from "../../src/log/log-records.ts"
import { signalRecord as record } from "../support/log-records.ts"

/** A local-records set with a consumer of `owned`; `ready` lists the partitions it was told about. */
const setup = (owned: ReadonlyArray<number>) => {
  const local = makeLocalRecords()
  const ready: Array<number> = []
  const detach = local.attach({ owns: (p) => owned.includes(p), ready: (p) => void ready.push(p) })
  const append = (partition: number, from: number, records: ReadonlyArray<SignalRecord>) =>
    local.appended(records, records.map(serializeRecord), records.map((_, i) => ({ partition, offset: from + i })))
  return { local, ready, detach, append }
}

describe("local records (a node's own appends, handed to its consumer)", () => {
  it("hands over the records that continue the partition where the consumer is, decoded as a read would", () => {
    const { local, ready, append } = setup([0])
    append(0, 10, [record("a", 0), record("a", 1)])
    append(0, 12, [record("a", 2)])
    expect(ready).toEqual([0, 0])
    const taken = local.take(0, 10)
    expect(taken.map((e) => [e.partition, e.offset, e.key])).toEqual([[0, 10, "a"], [0, 11, "a"], [0, 12, "a"]])
    expect(taken.map((e) => e.record)).toEqual([0, 1, 2].map((n) => JSON.parse(serializeRecord(record("a", n)))))
    // Taken once.
    expect(local.take(0, 13)).toEqual([])
  })

  it("skips what the consumer has passed, and stops at a gap", () => {
    const { local, append } = setup([0])
    append(0, 10, [record("a", 0), record("a", 1), record("a", 2)])
    append(0, 20, [record("a", 3)])
    expect(local.take(0, 11).map((e) => e.offset)).toEqual([11, 12])
  })

  it("gives nothing when the log holds records in between (another node's), and lets the rest go", () => {
    const { local, append } = setup([0])
    append(0, 15, [record("a", 0), record("a", 1)])
    expect(local.take(0, 12)).toEqual([])
    // What was held is read from the log instead.
    expect(local.take(0, 15)).toEqual([])
  })

  it("holds nothing for a partition the node does not consume, or once no consumer is attached", () => {
    const { local, ready, detach, append } = setup([1])
    append(0, 0, [record("a", 0)])
    expect(ready).toEqual([])
    expect(local.take(0, 0)).toEqual([])
    append(1, 0, [record("b", 0)])
    detach()
    expect(local.take(1, 0)).toEqual([])
    append(1, 1, [record("b", 1)])
    expect(local.take(1, 1)).toEqual([])
  })

  it("leaves a record that does not decode, and the partition's later ones, to the read", () => {
    const { local, append } = setup([0])
    const bad = { ...record("a", 1), type: "no-such-type" } as unknown as SignalRecord
    append(0, 0, [record("a", 0), bad, record("a", 2)])
    expect(local.take(0, 0).map((e) => e.offset)).toEqual([0])
  })
})
