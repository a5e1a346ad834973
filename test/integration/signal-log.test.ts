// The SignalLog contract, run against both implementations: PgLog over a fresh database and
// KafkaLog over a fresh topic on the run's broker. Every case gets a log of its own.
import { NodeServices } from "@effect/platform-node"
import { ConfigProvider, Context, Effect, Layer, Logger, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { ConfigResourceTypes, Kafka, logLevel } from "kafkajs"
import { randomBytes } from "node:crypto"
import { describe, expect, inject, it } from "vitest"
import type { SignalRecord } from "../../src/domain/records.ts"
import { connectKafka } from "../../src/log/kafka-client.ts"
import { KafkaLog } from "../../src/log/kafka-log.ts"
import { ensureTopic } from "../../src/log/kafka-topic.ts"
import { LogIdentityGuard } from "../../src/log/log-identity.ts"
import { partitionForKey } from "../../src/log/murmur2.ts"
import { PgLog } from "../../src/log/pg-log.ts"
import { type AppendResult, type LogEntry, type PartitionHandler, SignalLog } from "../../src/log/signal-log.ts"
import { databaseFromUrl, migrate } from "../../src/store/database.ts"
import { LogIdentityGuardLive } from "../../src/store/log-identity-repo.ts"
import { freshDatabase } from "../support/harness.ts"
import { deleteKafkaRecords } from "../support/kafka-admin.ts"
import { signalRecord as record } from "../support/log-records.ts"

const PARTITIONS = 4

/**
 * A new log; `node()` gives another node's view of that same log (same database or topic and
 * group); `corrupt(p)` writes a record to partition p that is not a LogRecord, behind the log's back;
 * `truncate(p, before)` deletes partition p's records before that offset, as retention does.
 */
type MakeLayer = () => Promise<{
  readonly node: () => Layer.Layer<SignalLog, unknown>
  readonly corrupt: (partition: number) => Promise<void>
  readonly truncate: (partition: number, before: number) => Promise<void>
}>

const users = (n: number) => Array.from({ length: n }, (_, i) => `usr_${i}_${randomBytes(2).toString("hex")}`)

/** Polls until `check` holds (or the deadline passes, when the last check's assertion fails). */
const eventually = async (check: () => void, timeoutMs = 20_000) => {
  const deadline = Date.now() + timeoutMs
  for (;;) {
    try {
      check()
      return
    } catch (error) {
      if (Date.now() > deadline) throw error
      await new Promise((r) => setTimeout(r, 25))
    }
  }
}

/** Everything readPartition returns for every partition, from offset 0. */
const readAll = (log: SignalLog["Service"]) =>
  Effect.gen(function*() {
    const all: Array<LogEntry> = []
    for (let p = 0; p < log.partitions; p++) {
      yield* log.readPartition(p, 0, (entries) => Effect.sync(() => void all.push(...entries)))
    }
    return all
  })

/** A handler that records what it is given; `start` answers `assigned`. */
const recorder = (options: { readonly start?: (partition: number) => number; readonly slowMs?: number } = {}) => {
  const delivered = new Map<number, Array<LogEntry>>()
  const assigned: Array<number> = []
  const revoked: Array<number> = []
  const handler: PartitionHandler = {
    assigned: (p) =>
      Effect.sync(() => {
        assigned.push(p)
        return options.start?.(p) ?? 0
      }),
    batch: (p, entries) =>
      Effect.gen(function*() {
        if (options.slowMs) yield* Effect.sleep(options.slowMs)
        const seen = delivered.get(p) ?? []
        seen.push(...entries)
        delivered.set(p, seen)
      }),
    revoked: (p) => Effect.sync(() => void revoked.push(p))
  }
  const all = () => [...delivered.values()].flat()
  return { handler, delivered, assigned, revoked, all }
}

const expectInOrderExactlyOnce = (delivered: Map<number, Array<LogEntry>>, from: (p: number) => number, ends: ReadonlyArray<number>) => {
  for (let p = 0; p < ends.length; p++) {
    const offsets = (delivered.get(p) ?? []).map((e) => e.offset)
    const expected = Array.from({ length: Math.max(0, ends[p]! - from(p)) }, (_, i) => from(p) + i)
    expect(offsets, `partition ${p}`).toEqual(expected)
    for (const e of delivered.get(p) ?? []) expect(e.partition).toBe(p)
  }
}

const logContract = (name: string, makeLayer: MakeLayer) =>
  describe(`SignalLog contract: ${name}`, () => {
    /** Runs a test body with a log of its own. */
    const withLog = async <A>(body: (log: SignalLog["Service"]) => Effect.Effect<A, unknown, Scope.Scope>) => {
      const layer = (await makeLayer()).node()
      return Effect.runPromise(
        Effect.gen(function*() {
          const log = yield* SignalLog
          return yield* body(log)
        }).pipe(
          // The test's scope (run's consumers) closes before the log's own resources.
          Effect.scoped,
          Effect.provide(layer)
        )
      )
    }

    it("append places each record on murmur2(user_id) and numbers each partition in input order", async () => {
      await withLog((log) =>
        Effect.gen(function*() {
          expect(log.partitions).toBe(PARTITIONS)
          expect(yield* log.endOffsets).toEqual([0, 0, 0, 0])
          const keys = users(10)
          const first = keys.flatMap((u) => [0, 1, 2].map((n) => record(u, n)))
          const second = keys.map((u) => record(u, 3))
          const results = [...(yield* log.append(first)), ...(yield* log.append(second))]
          const records = [...first, ...second]
          expect(results).toHaveLength(records.length)
          const next = [0, 0, 0, 0]
          records.forEach((r, i) => {
            const p = partitionForKey(r.user_id, PARTITIONS)
            expect(log.partitionFor(r.user_id)).toBe(p)
            expect(results[i]).toEqual({ partition: p, offset: next[p]! })
            next[p]! += 1
          })
          expect(yield* log.endOffsets).toEqual(next)
          // What is read back at each returned position is the record appended there.
          const byPosition = new Map((yield* readAll(log)).map((e) => [`${e.partition}/${e.offset}`, e]))
          records.forEach((r, i) => {
            const entry = byPosition.get(`${results[i]!.partition}/${results[i]!.offset}`)
            expect(entry?.record).toEqual(r)
            expect(entry?.key).toBe(r.user_id)
          })
        })
      )
    })

    it("200 concurrent single-record appends for 20 users all land once, at distinct offsets", async () => {
      await withLog((log) =>
        Effect.gen(function*() {
          const keys = users(20)
          const records = Array.from({ length: 200 }, (_, i) => record(keys[i % 20]!, Math.floor(i / 20)))
          const results = yield* Effect.forEach(records, (r) => log.append([r]).pipe(Effect.map((rs) => rs[0]!)), {
            concurrency: "unbounded"
          })
          const positions = results.map((r) => `${r.partition}/${r.offset}`)
          expect(new Set(positions).size).toBe(200)
          const ends = yield* log.endOffsets
          expect(ends.reduce((a, b) => a + b, 0)).toBe(200)
          // Gapless: each partition's offsets are exactly 0 .. end-1.
          for (let p = 0; p < PARTITIONS; p++) {
            const offsets = results.filter((r) => r.partition === p).map((r) => r.offset).sort((a, b) => a - b)
            expect(offsets).toEqual(Array.from({ length: ends[p]! }, (_, i) => i))
          }
          const read = yield* readAll(log)
          expect(read.map((e) => (e.record as SignalRecord).signal_id).sort()).toEqual(records.map((r) => r.signal_id).sort())
          // Per user, offsets follow the order the appends were acknowledged in.
          const at = new Map(read.map((e) => [(e.record as SignalRecord).signal_id, e]))
          records.forEach((r, i) => {
            expect(at.get(r.signal_id)).toMatchObject(results[i] as AppendResult)
          })
        })
      )
    })

    it("readPartition reads exactly [from, end) as of the call", async () => {
      await withLog((log) =>
        Effect.gen(function*() {
          const keys = users(8)
          const results = yield* log.append(keys.flatMap((u) => [0, 1, 2, 3, 4].map((n) => record(u, n))))
          const ends = yield* log.endOffsets
          const p = results[0]!.partition
          const from = 2
          const read: Array<LogEntry> = []
          yield* log.readPartition(p, from, (entries) => Effect.sync(() => void read.push(...entries)))
          expect(read.map((e) => e.offset)).toEqual(Array.from({ length: ends[p]! - from }, (_, i) => from + i))
          const fromEnd: Array<LogEntry> = []
          yield* log.readPartition(p, ends[p]!, (entries) => Effect.sync(() => void fromEnd.push(...entries)))
          expect(fromEnd).toEqual([])
          // Records appended while a read runs are not part of it.
          const during: Array<LogEntry> = []
          const more = keys.filter((u) => partitionForKey(u, PARTITIONS) === p).map((u) => record(u, 99))
          let appended = false
          yield* log.readPartition(p, 0, (entries) =>
            Effect.gen(function*() {
              during.push(...entries)
              if (!appended) {
                appended = true
                yield* Effect.orDie(log.append(more))
              }
            }))
          expect(during.map((e) => e.offset)).toEqual(Array.from({ length: ends[p]! }, (_, i) => i))
          expect((yield* log.endOffsets)[p]).toBe(ends[p]! + more.length)
        })
      )
    })

    it("run delivers every record once per partition in offset order, from the offset `assigned` answers", async () => {
      await withLog((log) =>
        Effect.gen(function*() {
          const keys = users(12)
          yield* log.append(keys.flatMap((u) => [0, 1, 2, 3, 4, 5].map((n) => record(u, n))))
          const before = yield* log.endOffsets
          // Resume mid-partition, as a node does from its stored offset.
          const start = (p: number) => Math.floor(before[p]! / 2)
          const r = recorder({ start })
          yield* Effect.scoped(
            Effect.gen(function*() {
              yield* log.run(r.handler)
              yield* Effect.promise(() => eventually(() => expectInOrderExactlyOnce(r.delivered, start, before)))
              // Appended while running: delivered too.
              yield* log.append(keys.flatMap((u) => [6, 7].map((n) => record(u, n))))
              const after = yield* log.endOffsets
              yield* Effect.promise(() => eventually(() => expectInOrderExactlyOnce(r.delivered, start, after)))
              expect([...r.assigned].sort()).toEqual([0, 1, 2, 3])
            })
          )
          // Stopping revokes every assigned partition.
          expect([...r.revoked].sort()).toEqual([0, 1, 2, 3])
          const contents = new Map((yield* readAll(log)).map((e) => [`${e.partition}/${e.offset}`, e.record]))
          for (const e of r.all()) expect(e.record).toEqual(contents.get(`${e.partition}/${e.offset}`))
        })
      )
    })

    it("a handler whose batches are slow loses and reorders nothing", async () => {
      await withLog((log) =>
        Effect.gen(function*() {
          const keys = users(16)
          const r = recorder({ slowMs: 40 })
          yield* log.run(r.handler)
          for (let wave = 0; wave < 5; wave++) {
            yield* Effect.forEach(keys, (u) => log.append([record(u, wave * 2), record(u, wave * 2 + 1)]), {
              concurrency: "unbounded"
            })
            // The appends come in waves while the slow batches are handled: the load's pace.
            yield* Effect.sleep("30 millis")
          }
          const ends = yield* log.endOffsets
          expect(ends.reduce((a, b) => a + b, 0)).toBe(160)
          yield* Effect.promise(() => eventually(() => expectInOrderExactlyOnce(r.delivered, () => 0, ends), 20_000))
          // Per user, records arrive in the order they were appended.
          for (const u of keys) {
            const ns = r.all().filter((e) => e.key === u).map((e) => (e.record as SignalRecord).metadata.n)
            expect(ns).toEqual(Array.from({ length: 10 }, (_, i) => i))
          }
        })
      )
    })

    it("a batch the handler fails is delivered again once its partition restarts from the stored offset: nothing skipped", async () => {
      await withLog((log) =>
        Effect.gen(function*() {
          const keys = users(12)
          const failing = keys[0]!
          const p = partitionForKey(failing, PARTITIONS)
          // The handler stores where each partition resumes, as the engine does with its commits,
          // and fails the first batch that holds the failing user's record 3.
          const stored = new Map<number, number>()
          const delivered = new Map<number, Array<LogEntry>>()
          const assigned: Array<number> = []
          let failed = 0
          /** How often the failing partition had been assigned when its batch failed. */
          let assignedBefore = 0
          const handler: PartitionHandler = {
            assigned: (q) => Effect.sync(() => (assigned.push(q), stored.get(q) ?? 0)),
            batch: (q, entries) =>
              Effect.suspend(() => {
                const holds = entries.some((e) => e.key === failing && (e.record as SignalRecord).metadata.n === 3)
                if (holds && failed === 0) {
                  failed++
                  assignedBefore = assigned.filter((x) => x === p).length
                  return Effect.die(new Error("the handler's store is down"))
                }
                delivered.set(q, [...(delivered.get(q) ?? []), ...entries])
                stored.set(q, entries[entries.length - 1]!.offset + 1)
                return Effect.void
              }),
            revoked: () => Effect.void
          }
          yield* log.run(handler)
          // Appends keep coming while the partition fails and restarts.
          for (let wave = 0; wave < 6; wave++) {
            yield* log.append(keys.map((u) => record(u, wave)))
            yield* Effect.sleep("100 millis")
          }
          const ends = yield* log.endOffsets
          yield* Effect.promise(() => eventually(() => expectInOrderExactlyOnce(delivered, () => 0, ends), 30_000))
          expect(failed).toBe(1)
          // The failing partition was assigned again after the failure (a consumer group may also
          // rebalance while it forms, so not necessarily only once).
          expect(assigned.filter((q) => q === p).length).toBeGreaterThan(assignedBefore)
          const ns = (delivered.get(p) ?? []).filter((e) => e.key === failing).map((e) => (e.record as SignalRecord).metadata.n)
          expect(ns).toEqual([0, 1, 2, 3, 4, 5])
        })
      )
    })

    it("a record that does not decode stops its partition there (revoked), without skipping it", async () => {
      const log = await makeLayer()
      const keys = users(12)
      const p = partitionForKey(keys[0]!, PARTITIONS)
      const other = keys.find((u) => partitionForKey(u, PARTITIONS) !== p)!
      await Effect.runPromise(
        Effect.gen(function*() {
          const l = yield* SignalLog
          yield* l.append([0, 1, 2].map((n) => record(keys[0]!, n)))
          yield* Effect.promise(() => log.corrupt(p))
          yield* l.append([record(keys[0]!, 3)])
          const r = recorder()
          yield* l.run(r.handler)
          // A later record of another partition is the sign the consumer got past the bad one's time.
          yield* l.append([record(other, 0)])
          yield* Effect.promise(() =>
            eventually(() => {
              expect(r.all().some((e) => e.key === other)).toBe(true)
              expect((r.delivered.get(p) ?? []).map((e) => e.offset)).toEqual([0, 1, 2])
              expect(r.revoked).toContain(p)
            })
          )
          expect((yield* l.endOffsets)[p]).toBe(5)
        }).pipe(Effect.scoped, Effect.provide(log.node()))
      )
    })

    it("startOffsets says where each partition begins once records were deleted from its start", async () => {
      const log = await makeLayer()
      const keys = users(12)
      const p = partitionForKey(keys[0]!, PARTITIONS)
      await Effect.runPromise(
        Effect.gen(function*() {
          const l = yield* SignalLog
          expect(yield* l.startOffsets).toEqual([0, 0, 0, 0])
          yield* l.append(keys.flatMap((u) => [0, 1, 2].map((n) => record(u, n))))
          const ends = yield* l.endOffsets
          expect(yield* l.startOffsets).toEqual([0, 0, 0, 0])
          yield* Effect.promise(() => log.truncate(p, 2))
          expect(yield* l.startOffsets).toEqual([0, 1, 2, 3].map((q) => (q === p ? 2 : 0)))
          expect(yield* l.endOffsets).toEqual(ends)
          // Read from where it begins, the partition is the rest, in order.
          const rest: Array<LogEntry> = []
          yield* l.readPartition(p, 2, (entries) => Effect.sync(() => void rest.push(...entries)))
          expect(rest.map((e) => e.offset)).toEqual(Array.from({ length: ends[p]! - 2 }, (_, i) => i + 2))
          // Emptied entirely, a partition begins at its end.
          yield* Effect.promise(() => log.truncate(p, ends[p]!))
          expect((yield* l.startOffsets)[p]).toBe(ends[p])
        }).pipe(Effect.scoped, Effect.provide(log.node()))
      )
    })

    it("a node's own appends and another node's, interleaved in one partition, are delivered once each, in offset order, as the log holds them", async () => {
      // The consuming node hands what it appended to its handler without reading it back; what
      // another node appends in between must not be skipped, nor its own records doubled.
      const log = await makeLayer()
      const keys = users(8)
      await Effect.runPromise(
        Effect.gen(function*() {
          const other = Context.get(yield* Layer.build(log.node()), SignalLog)
          yield* Effect.gen(function*() {
            const self = yield* SignalLog
            const r = recorder()
            yield* self.run(r.handler)
            for (let wave = 0; wave < 6; wave++) {
              yield* Effect.all([
                Effect.forEach(keys, (u) => self.append([record(u, wave * 4), record(u, wave * 4 + 1)]), { concurrency: "unbounded" }),
                Effect.forEach(keys, (u) => other.append([record(u, wave * 4 + 2), record(u, wave * 4 + 3)]), { concurrency: "unbounded" })
              ], { concurrency: 2 })
            }
            const ends = yield* self.endOffsets
            expect(ends.reduce((a, b) => a + b, 0)).toBe(keys.length * 24)
            yield* Effect.promise(() => eventually(() => expectInOrderExactlyOnce(r.delivered, () => 0, ends)))
            const contents = new Map((yield* readAll(self)).map((e) => [`${e.partition}/${e.offset}`, e]))
            for (const e of r.all()) {
              const stored = contents.get(`${e.partition}/${e.offset}`)!
              expect(e.record).toEqual(stored.record)
              expect(e.key).toBe(stored.key)
            }
          }).pipe(Effect.scoped, Effect.provide(log.node()))
        }).pipe(Effect.scoped)
      )
    }, 60_000)

    it("a second node takes over when the first stops, resuming from the offsets the handler stored", async () => {
      const log = await makeLayer()
      // What the engine keeps in PostgreSQL: the next offset of each partition, written with each batch.
      const stored = new Map<number, number>()
      const deliveries = new Map<string, number>()
      const owners = new Map<number, string>()
      const node = (name: string): PartitionHandler => ({
        assigned: (p) =>
          Effect.sync(() => {
            owners.set(p, name)
            return stored.get(p) ?? 0
          }),
        batch: (p, entries) =>
          Effect.sync(() => {
            expect(owners.get(p), `partition ${p} batch on ${name}`).toBe(name)
            for (const e of entries) {
              const id = (e.record as SignalRecord).signal_id
              deliveries.set(id, (deliveries.get(id) ?? 0) + 1)
            }
            stored.set(p, entries[entries.length - 1]!.offset + 1)
          }),
        revoked: (p) => Effect.sync(() => void (owners.get(p) === name && owners.delete(p)))
      })
      const keys = users(12)
      const appendWave = (l: SignalLog["Service"], wave: number) => l.append(keys.map((u) => record(u, wave)))
      const delivered = (n: number) => () => {
        expect(deliveries.size).toBe(n)
        expect([...deliveries.values()].every((c) => c === 1)).toBe(true)
      }
      await Effect.runPromise(
        Effect.gen(function*() {
          // b's layer lives for the whole test; a's only for the inner scope.
          const b = Context.get(yield* Layer.build(log.node()), SignalLog)
          const outer = yield* Effect.scope
          yield* Effect.gen(function*() {
            const a = yield* SignalLog
            yield* appendWave(a, 0)
            yield* a.run(node("a"))
            yield* Effect.promise(() => eventually(delivered(12)))
            yield* b.run(node("b")).pipe(Scope.provide(outer))
            yield* appendWave(a, 1)
            yield* Effect.promise(() => eventually(delivered(24)))
          }).pipe(Effect.scoped, Effect.provide(log.node()))
          // a has stopped: b owns every partition and carries on where a left off.
          yield* appendWave(b, 2)
          yield* Effect.promise(() => eventually(delivered(36), 30_000))
          expect([...owners.entries()].sort()).toEqual([[0, "b"], [1, "b"], [2, "b"], [3, "b"]])
        }).pipe(Effect.scoped)
      )
    }, 60_000)
  })

const configLayer = (env: Record<string, string>) => ConfigProvider.layer(ConfigProvider.fromEnv({ env }))

/** The contract is the log's alone: a topic with no database admits itself (the guard is tested in test/e2e/replay.test.ts). */
const anyLog = Layer.succeed(LogIdentityGuard, LogIdentityGuard.of({ admit: () => Effect.void, adoptAdmitted: Effect.succeed(undefined) }))

logContract("PgLog", async () => {
  const url = await freshDatabase()
  const migrated = Layer.effectDiscard(migrate.pipe(Effect.orDie)).pipe(Layer.provide(NodeServices.layer))
  const corrupt = (partition: number) =>
    Effect.runPromise(
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`
          WITH head AS (
            UPDATE signal_log_heads SET next_offset = next_offset + 1 WHERE partition = ${partition}
            RETURNING next_offset - 1 AS o)
          INSERT INTO signal_log (partition, "offset", key, record)
          SELECT ${partition}, o, 'corrupt', '{"v":1,"kind":"bogus"}'::jsonb FROM head`
      }).pipe(Effect.provide(databaseFromUrl(url)), Effect.scoped)
    )
  const truncate = (partition: number, before: number) =>
    Effect.runPromise(
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql`DELETE FROM signal_log WHERE partition = ${partition} AND "offset" < ${before}`).pipe(
        Effect.provide(databaseFromUrl(url)),
        Effect.scoped,
        Effect.asVoid
      )
    )
  return {
    corrupt,
    truncate,
    // Each node has its own pool, as separate processes would.
    node: () =>
      PgLog.layer.pipe(
        Layer.provide(LogIdentityGuardLive),
        Layer.provide(migrated),
        Layer.provide(databaseFromUrl(url)),
        Layer.provide(configLayer({ LOG_PARTITIONS: String(PARTITIONS) }))
      )
  }
})

// One producer (as shipped) and three side by side (KAFKA_PRODUCERS: lanes of partitions, each
// with its own send in flight): the same contract, order per partition included.
for (const producers of [1, 3]) {
  logContract(producers === 1 ? "KafkaLog" : `KafkaLog with ${producers} producers`, async () => {
    const id = randomBytes(6).toString("hex")
    const topic = `signals-contract-${id}`
    const env = configLayer({
      KAFKA_BROKERS: inject("kafkaBrokers"),
      KAFKA_TOPIC: topic,
      KAFKA_GROUP_ID: `signal-engine-contract-${id}`,
      KAFKA_PRODUCERS: String(producers),
      LOG_PARTITIONS: String(PARTITIONS)
    })
    const corrupt = async (partition: number) => {
      const producer = new Kafka({ brokers: inject("kafkaBrokers").split(","), logLevel: logLevel.ERROR }).producer()
      await producer.connect()
      try {
        await producer.send({ topic, acks: -1, messages: [{ partition, key: "corrupt", value: "{\"v\":1,\"kind\":\"bogus\"}" }] })
      } finally {
        await producer.disconnect()
      }
    }
    const truncate = (partition: number, before: number) => deleteKafkaRecords(inject("kafkaBrokers"), topic, partition, before)
    return { corrupt, truncate, node: () => KafkaLog.layer.pipe(Layer.provide(anyLog), Layer.provide(env)) }
  })
}

describe("KafkaLog topic settings", () => {
  const kafka = () => new Kafka({ brokers: inject("kafkaBrokers").split(","), logLevel: logLevel.ERROR })
  const retentionOf = async (topic: string) => {
    const admin = kafka().admin()
    await admin.connect()
    try {
      const described = await admin.describeConfigs({
        includeSynonyms: false,
        resources: [{ type: ConfigResourceTypes.TOPIC, name: topic, configNames: ["retention.ms", "retention.bytes", "cleanup.policy"] }]
      })
      return Object.fromEntries((described.resources[0]?.configEntries ?? []).map((e) => [e.configName, e.configValue]))
    } finally {
      await admin.disconnect()
    }
  }
  /** Starts a KafkaLog on `topic` and answers the warnings it logged itself (not kafkajs's), and every error logged. */
  const start = async (topic: string) => {
    const warnings: Array<string> = []
    const errors: Array<string> = []
    const capture = Logger.make(({ logLevel: level, message }) => {
      const line = (Array.isArray(message) ? message : [message]).map(String).join(" ")
      if (level === "Warn" && line.startsWith("KafkaLog:")) warnings.push(line)
      if (level === "Error" || level === "Fatal") errors.push(line)
    })
    const id = randomBytes(6).toString("hex")
    await Effect.runPromise(
      Effect.scoped(Layer.build(KafkaLog.layer.pipe(Layer.provide(anyLog)))).pipe(
        Effect.provide(configLayer({
          KAFKA_BROKERS: inject("kafkaBrokers"),
          KAFKA_TOPIC: topic,
          KAFKA_GROUP_ID: `signal-engine-settings-${id}`,
          LOG_PARTITIONS: String(PARTITIONS)
        })),
        Effect.provide(Logger.layer([capture]))
      )
    )
    return { warnings, errors }
  }

  it("creates the topic keeping every record (no retention by age or size, no compaction)", async () => {
    const topic = `signals-settings-${randomBytes(6).toString("hex")}`
    expect(await start(topic)).toEqual({ warnings: [], errors: [] })
    expect(await retentionOf(topic)).toEqual({ "retention.ms": "-1", "retention.bytes": "-1", "cleanup.policy": "delete" })
    // Started again on the topic it made: nothing to warn or complain about.
    expect(await start(topic)).toEqual({ warnings: [], errors: [] })
  })

  it("warns at start when an existing topic deletes records, and leaves its settings alone", async () => {
    const topic = `signals-settings-${randomBytes(6).toString("hex")}`
    const admin = kafka().admin()
    await admin.connect()
    try {
      await admin.createTopics({
        topics: [{ topic, numPartitions: PARTITIONS, configEntries: [{ name: "retention.ms", value: "86400000" }] }]
      })
      // Polled rather than kafkajs's waitForLeaders, which gives up when the broker does not know the
      // new topic yet ("This server does not host this topic-partition"), as a busy machine's can.
      const led = () => admin.fetchTopicMetadata({ topics: [topic] }).then((m) => m.topics[0]?.partitions.filter((p) => p.leader >= 0).length, () => 0)
      for (const deadline = Date.now() + 20_000; (await led()) !== PARTITIONS;) {
        if (Date.now() > deadline) throw new Error(`topic ${topic}: no leaders after 20 s`)
        await new Promise((r) => setTimeout(r, 50))
      }
    } finally {
      await admin.disconnect()
    }
    const { warnings } = await start(topic)
    expect(warnings).toHaveLength(1)
    expect(warnings[0]).toMatch(new RegExp(`topic ${topic} has retention\\.ms=86400000: the broker deletes records, and a replay cannot rebuild`))
    expect((await retentionOf(topic))["retention.ms"]).toBe("86400000")
  })
})

describe("KafkaLog topic creation", () => {
  /** ensureTopic on `topic` as a node of its own runs it: its own client, PARTITIONS partitions. */
  const ensure = (topic: string) =>
    Effect.scoped(Effect.flatMap(connectKafka, ensureTopic)).pipe(
      Effect.provide(configLayer({ KAFKA_BROKERS: inject("kafkaBrokers"), KAFKA_TOPIC: topic, LOG_PARTITIONS: String(PARTITIONS) }))
    )
  /**
   * Runs `run` (ensureTopic), then reads the topic's offsets and each partition's leader on a
   * client connected beforehand (as the log's reader is), so the read follows the return at once.
   */
  const ensureThenRead = async (run: Effect.Effect<unknown, unknown>, topic: string) => {
    const admin = new Kafka({ brokers: inject("kafkaBrokers").split(","), logLevel: logLevel.ERROR }).admin()
    await admin.connect()
    try {
      await Effect.runPromise(run)
      // Fails while a leader the metadata names does not serve its partition yet (NOT_LEADER_FOR_PARTITION).
      const offsets = await admin.fetchTopicOffsets(topic)
      const metadata = await admin.fetchTopicMetadata({ topics: [topic] })
      return { offsets, leaders: (metadata.topics.find((t) => t.name === topic)?.partitions ?? []).map((p) => p.leader) }
    } finally {
      await admin.disconnect()
    }
  }

  it("returns once every partition of the topic it created has a leader that answers", async () => {
    const topic = `signals-leaders-${randomBytes(6).toString("hex")}`
    const { offsets, leaders } = await ensureThenRead(ensure(topic), topic)
    expect(offsets).toHaveLength(PARTITIONS)
    expect(leaders).toHaveLength(PARTITIONS)
    expect(leaders.filter((leader) => leader < 0)).toEqual([])
  })

  it("succeeds on two nodes creating the same topic at once", async () => {
    const topic = `signals-leaders-${randomBytes(6).toString("hex")}`
    const { offsets, leaders } = await ensureThenRead(Effect.all([ensure(topic), ensure(topic)], { concurrency: "unbounded" }), topic)
    expect(offsets).toHaveLength(PARTITIONS)
    expect(leaders).toHaveLength(PARTITIONS)
    expect(leaders.filter((leader) => leader < 0)).toEqual([])
  })
})
