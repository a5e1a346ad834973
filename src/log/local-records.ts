import type { LogRecord } from "../domain/records.ts"
import { decodeStored } from "./log-records.ts"
import type { AppendResult, LogEntry } from "./signal-log.ts"

/** Records held for a partition before they are read from the log instead (a stuck partition). */
const MAX_HELD = 10_000

/** What the consumer of the log tells the appender while it runs. */
export interface LocalConsumer {
  /** Whether this node consumes the partition now (only its records are held). */
  readonly owns: (partition: number) => boolean
  /** Records of the partition are waiting to be taken. */
  readonly ready: (partition: number) => void
}

/** The records this node appended, held for its own consumer (see makeLocalRecords). */
export interface LocalRecords {
  /**
   * Called by the log with what one write appended: the records, their stored JSON, and where
   * each landed (all three in the same order).
   */
  readonly appended: (
    records: ReadonlyArray<LogRecord>,
    stored: ReadonlyArray<string>,
    placed: ReadonlyArray<AppendResult>
  ) => void
  /**
   * The held records of a partition that continue it from `next`, in offset order (none when
   * the first held one is not at `next`: the log has records in between). Everything held for
   * the partition is let go: what was not taken is read from the log.
   */
  readonly take: (partition: number, next: number) => ReadonlyArray<LogEntry>
  /** While the consumer runs; records are held only meanwhile. Answers its detach. */
  readonly attach: (consumer: LocalConsumer) => () => void
  /** The partition is no longer consumed here: its held records go. */
  readonly forget: (partition: number) => void
}

/**
 * The records this node appended, handed to its own consumer of their partition without a read
 * of the log: an append answers where each record landed, so the consumer can fold it at once
 * instead of after its next fetch (Kafka) or its next query (PgLog). What the consumer gets is
 * what a read gives: the record's stored JSON decoded at its partition and offset.
 *
 * Only a record that continues its partition exactly where the consumer is may be taken: where
 * the log holds records this node did not append (another node's, or any appended while the
 * partition was someone else's) the held records are dropped and the consumer reads the log as
 * before, which has them all. Taking is an optimisation only; reading alone is always right.
 */
export const makeLocalRecords = (): LocalRecords => {
  const held = new Map<number, Array<LogEntry>>()
  let consumer: LocalConsumer | undefined

  return {
    appended(records: ReadonlyArray<LogRecord>, stored: ReadonlyArray<string>, placed: ReadonlyArray<AppendResult>) {
      const c = consumer
      if (c === undefined) return
      const at = performance.now()
      const touched = new Set<number>()
      const stopped = new Set<number>()
      for (let i = 0; i < records.length; i++) {
        const { partition, offset } = placed[i]!
        if (stopped.has(partition) || !c.owns(partition)) continue
        const decoded = decodeStored(partition, offset, JSON.parse(stored[i]!))
        if (decoded._tag === "Failure") {
          // Left to the read, which stops the partition there and says why.
          stopped.add(partition)
          continue
        }
        let list = held.get(partition)
        if (list === undefined) held.set(partition, list = [])
        if (list.length >= MAX_HELD) {
          list.length = 0
          stopped.add(partition)
          continue
        }
        list.push({ partition, offset, key: records[i]!.user_id, record: decoded.success, at })
        touched.add(partition)
      }
      for (const p of touched) c.ready(p)
    },

    take(partition: number, next: number): ReadonlyArray<LogEntry> {
      const list = held.get(partition)
      if (list === undefined || list.length === 0) return []
      held.delete(partition)
      let start = 0
      while (start < list.length && list[start]!.offset < next) start++
      let end = start
      while (end < list.length && list[end]!.offset === next + (end - start)) end++
      return end === start ? [] : list.slice(start, end)
    },

    attach(c: LocalConsumer) {
      consumer = c
      return () => {
        if (consumer === c) consumer = undefined
        held.clear()
      }
    },

    forget(partition: number) {
      held.delete(partition)
    }
  }
}
