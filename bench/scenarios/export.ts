/**
 * export: a CSV usage export of a year of a large org, read by a client as fast as it can, and
 * the service's resident memory while it streams, against its resident memory before.
 */
import { randomBytes } from "node:crypto"
import { setTimeout as sleep } from "node:timers/promises"
import { Effect } from "effect"
import { hashKey } from "../../src/domain/credentials.ts"
import type { Bench } from "../context.ts"
import { withDb } from "../database.ts"
import { round, rssOf, rssPeakOf } from "../measure.ts"
import { options } from "../options.ts"
import { say } from "../say.ts"
import { seedUsers } from "../seed.ts"
import { startService } from "../service.ts"

const users = 1000
const projects = 20
const models = ["claude-sonnet-4", "claude-opus-4", "gpt-4o", "gemini-2.5-pro", "o3"]
const year = { from: "2025-01-01T00:00:00Z", to: "2026-01-01T00:00:00Z" }

/**
 * `count` events of the seeded users over the year, in one statement: each at a random instant,
 * project and model, so nearly every one is a group of its own (day × user × project × model)
 * and the export has about as many rows as there are events: the largest file the range can give.
 */
const seedEvents = (url: string, orgId: string, count: number) =>
  withDb(url, (sql) =>
    sql`INSERT INTO events (id, signal_id, org_id, environment, session_id, user_id, project_id, ts, type, adapter, model,
          tokens_in, tokens_out, latency_ms, cost_usd, cost_estimated, model_known, error_code, metadata, log_partition, log_offset)
        SELECT 'evt_x' || i, 'sig_x' || i, ${orgId}, 'test', 'sess_x' || (i / 20), 'user_bench_' || (i % ${users}),
          'proj_' || (i / ${users} % ${projects}), ${year.from}::timestamptz + random() * interval '365 days', 'post-tool', 'claude-code',
          (${models}::text[])[1 + i / 7 % ${models.length}], 1000 + i % 500, 100 + i % 50, 120, 0.001 * (1 + i % 7), false, true,
          CASE WHEN i % 100 = 0 THEN 'rate_limited' END, '{}', 0, i
        FROM generate_series(1, ${count}) AS i`.pipe(Effect.andThen(sql`ANALYZE events`)))

/** A management key of the org's test environment (where the bench's license keys are). */
const seedApiKey = async (url: string, orgId: string): Promise<string> => {
  const key = `sek_test_${randomBytes(16).toString("hex")}`
  await withDb(url, (sql) =>
    sql`INSERT INTO api_keys (id, org_id, environment, name, key_hash, key_hint, scopes)
      VALUES (${`key_bench_${randomBytes(4).toString("hex")}`}, ${orgId}, 'test', 'bench export', ${hashKey(key)}, 'sek_test_…', ${[
      "events:read"
    ]})`)
  return key
}

/** Reads the whole export, counting bytes and lines and summing the signals column, sampling the service's RSS meanwhile. */
const readExport = async (port: number, key: string, pid: number, range: { readonly from: string; readonly to: string } = year) => {
  let sampledPeak = rssOf(pid)
  const sampler = setInterval(() => {
    sampledPeak = Math.max(sampledPeak, rssOf(pid))
  }, 20)
  const started = performance.now()
  try {
    const res = await fetch(`http://127.0.0.1:${port}/api/v1/usage/export?${new URLSearchParams(range)}`, {
      headers: { authorization: `Bearer ${key}` }
    })
    if (res.status !== 200) throw new Error(`export: ${res.status} ${await res.text()}`)
    let firstByteMs: number | undefined
    let bytes = 0
    let lines = 0
    let signals = 0
    let rest = ""
    const decoder = new TextDecoder()
    for await (const chunk of res.body!) {
      firstByteMs ??= performance.now() - started
      bytes += chunk.byteLength
      const text = rest + decoder.decode(chunk, { stream: true })
      const parts = text.split("\n")
      rest = parts.pop()!
      // No name in this org holds a comma or a line break: the signals column is the 8th.
      for (const line of parts) {
        if (lines++ > 0) signals += Number(line.split(",")[7])
      }
    }
    return { seconds: (performance.now() - started) / 1000, firstByteMs: firstByteMs ?? 0, bytes, rows: lines - 1, signals, sampledPeak }
  } finally {
    clearInterval(sampler)
  }
}

export const exportScenario = async (bench: Bench) => {
  const id = `export${randomBytes(3).toString("hex")}`
  const url = await bench.database.newDatabase(`bench_${id}`)
  const count = options.exportEvents
  say(`export: seeding ${users} users and ${count} events over a year`)
  const tenant = await seedUsers(url, users)
  await seedEvents(url, tenant.orgId, count)
  const key = await seedApiKey(url, tenant.orgId)
  const service = await startService(bench, url, "pg", id)
  try {
    // One day's export first, unmeasured: the first management request's code is compiled and
    // its pools filled then, and that is not what an export costs.
    await readExport(service.port, key, service.pid, { from: year.from, to: "2025-01-02T00:00:00Z" })
    await sleep(2_000)
    // A day's export measured as the year's is: what the service grows by whatever the size.
    const dayBefore = rssOf(service.pid)
    const day = await readExport(service.port, key, service.pid, { from: "2025-06-01T00:00:00Z", to: "2025-06-02T00:00:00Z" })
    await sleep(2_000)
    const before = rssOf(service.pid)
    const peakBefore = rssPeakOf(service.pid)
    say(`export: streaming the year as CSV`)
    const read = await readExport(service.port, key, service.pid)
    if (read.signals !== count) throw new Error(`export: the file counts ${read.signals} signals of the ${count} written`)
    bench.record({
      scenario: "export",
      log: "-",
      figures: {
        events: count,
        rows: read.rows,
        mb: round(read.bytes / 1048576),
        seconds: round(read.seconds, 2),
        rows_per_s: Math.round(read.rows / read.seconds),
        first_byte_ms: Math.round(read.firstByteMs),
        rss_before_mb: round(before / 1048576),
        rss_peak_mb: round(read.sampledPeak / 1048576),
        rss_growth_mb: round((read.sampledPeak - before) / 1048576),
        day_rows: day.rows,
        day_rss_growth_mb: round((day.sampledPeak - dayBefore) / 1048576),
        // The kernel's high-water mark, exact where sampling can miss a spike; it counts start-up too.
        vm_hwm_before_mb: round(peakBefore / 1048576),
        vm_hwm_after_mb: round(rssPeakOf(service.pid) / 1048576)
      }
    })
  } finally {
    await service.stop()
  }
}
