/**
 * What the ingest group's signals occupy in PostgreSQL, for the capacity model
 * (docs/benchmarks.md): the events table with its indexes per event, the log's records (PgLog)
 * per record, and the whole database's growth per event (sessions, usage counts, actor
 * snapshots, free space in pages included), read once the write-behind has committed everything.
 */
import { Effect } from "effect"
import { withDb } from "./database.ts"
import { round } from "./measure.ts"

interface Sizes {
  readonly events: number
  readonly events_bytes: number
  readonly log_records: number
  readonly log_bytes: number
  readonly database_bytes: number
}

const sizes = (url: string): Promise<Sizes> =>
  withDb(url, (sql) =>
    sql<{ [K in keyof Sizes]: string }>`SELECT
        (SELECT count(*) FROM events)::text AS events,
        pg_total_relation_size('events')::text AS events_bytes,
        (SELECT count(*) FROM signal_log)::text AS log_records,
        pg_total_relation_size('signal_log')::text AS log_bytes,
        pg_database_size(current_database())::text AS database_bytes`.pipe(
      Effect.map(([row]) => ({
        events: Number(row!.events),
        events_bytes: Number(row!.events_bytes),
        log_records: Number(row!.log_records),
        log_bytes: Number(row!.log_bytes),
        database_bytes: Number(row!.database_bytes)
      }))
    ))

/** The sizes before any signal: what the growth is counted from. */
export const storageBaseline = sizes

/** The figures, once the events' count has stood still for a second (the last commits written). */
export const storageFigures = async (url: string, before: Sizes) => {
  let now = await sizes(url)
  for (let i = 0; i < 30; i++) {
    await new Promise((resolve) => setTimeout(resolve, 1000))
    const next = await sizes(url)
    const settled = next.events === now.events
    now = next
    if (settled) break
  }
  const events = now.events - before.events
  const per = (bytes: number, n: number) => (n <= 0 ? "n/a" : round(bytes / n, 0))
  return {
    events,
    events_bytes_per_event: per(now.events_bytes - before.events_bytes, events),
    log_bytes_per_record: per(now.log_bytes - before.log_bytes, now.log_records - before.log_records),
    database_growth_bytes_per_event: per(now.database_bytes - before.database_bytes, events)
  }
}
