/** memory: what an idle user costs the service (resident memory, live heap, idle CPU), with every actor evicted and reloaded. */
import { randomBytes } from "node:crypto"
import { setTimeout as sleep } from "node:timers/promises"
import { Effect } from "effect"
import { freePort } from "../../test/support/ports.ts"
import type { Bench } from "../context.ts"
import { withDb } from "../database.ts"
import { heapAfterGc } from "../heap-after-gc.ts"
import { cpuMsOf, round, rssOf, rssPeakOf } from "../measure.ts"
import { type LogName, options, smoke } from "../options.ts"
import { say } from "../say.ts"
import { seedUsers } from "../seed.ts"
import { type Service, startService } from "../service.ts"

/**
 * How long the memory scenario leaves the service idle before measuring: at least past its idle
 * compaction (10 s), and until the service has logged it, up to a limit (a second that was busy
 * after the load starts its 10 s over).
 */
const idleWaitMs = smoke ? 1_000 : 15_000
const compactionWaitMs = smoke ? 1_000 : 60_000
/** Idle actors go after ACTOR_IDLE_TIMEOUT (1 s here), swept every second: far within this. */
const evictionWaitMs = 30_000

/** What the service's /readyz says of its actors. */
const actorsOf = async (port: number): Promise<{ readonly in_memory: number; readonly session_timers: number }> => {
  const body = (await (await fetch(`http://127.0.0.1:${port}/readyz`)).json()) as {
    readonly checks: { readonly actors: { readonly in_memory: number; readonly session_timers: number } }
  }
  return body.checks.actors
}

/**
 * After a burst: waits until the service holds no actor in memory (every one evicted) and has
 * compacted its heap (or the wait ran out), then takes the idle RSS (the minimum of 5 samples).
 */
const settle = async (service: Service) => {
  const idleFrom = Date.now()
  const logFrom = service.log().length
  let compactedAfterS: number | undefined
  let evictedAfterS: number | undefined
  for (;;) {
    const elapsed = Date.now() - idleFrom
    if (evictedAfterS === undefined && (await actorsOf(service.port)).in_memory === 0) evictedAfterS = round(elapsed / 1000)
    if (compactedAfterS === undefined && service.log().slice(logFrom).includes("idle: heap compacted")) {
      compactedAfterS = round(elapsed / 1000)
    }
    if (evictedAfterS === undefined && elapsed > evictionWaitMs) {
      throw new Error(`memory: the service still holds ${(await actorsOf(service.port)).in_memory} actors after ${evictionWaitMs / 1000} s idle`)
    }
    const waiting = evictedAfterS === undefined || elapsed < idleWaitMs || (compactedAfterS === undefined && elapsed < compactionWaitMs)
    if (!waiting) break
    await sleep(250)
  }
  // The loop ends only once every actor is gone (or throws).
  const evicted = evictedAfterS!
  const samples: Array<number> = []
  for (let i = 0; i < 5; i++) {
    samples.push(rssOf(service.pid))
    await sleep(400)
  }
  return { rss: Math.min(...samples), evictedAfterS: evicted, compactedAfterS }
}

/**
 * Memory per idle user, as the issue frames it: every user has sent signals, its actor was evicted
 * when idle and reloaded from its snapshot by its next signal. Two rounds of one signal per user;
 * after each the service is left idle until every actor is evicted and the heap compacted. The
 * figures are those after the second round; the growth from the first to the second is what a
 * reload leaves behind (zero when nothing leaks: both rounds end with the same users, each with
 * one open session).
 */
export const memory = async (bench: Bench, log: LogName) => {
  const id = `${log}${randomBytes(3).toString("hex")}`
  const url = await bench.database.newDatabase(`bench_memory_${id}`)
  say(`memory over ${log}: seeding ${options.memoryUsers} users`)
  const tenant = await seedUsers(url, options.memoryUsers)
  const inspectPort = await freePort()
  const service = await startService(bench, url, log, id, { ACTOR_IDLE_TIMEOUT: "1 second" }, [`--inspect=127.0.0.1:${inspectPort}`])
  const oncePerUser = () =>
    bench.measured(service.pid, {
      port: service.port,
      path: "/engine/v1/signals",
      keys: tenant.keys,
      durationS: 0,
      concurrency: options.concurrency,
      batch: 1,
      oncePerKey: true
    })
  try {
    await sleep(2_000)
    const heapBaseline = await heapAfterGc(inspectPort)
    const baseline = rssOf(service.pid)
    say(`memory over ${log}: one signal from each user`)
    const { result: first } = await oncePerUser()
    const loaded = rssOf(service.pid)
    const firstIdle = await settle(service)
    const heapFirst = await heapAfterGc(inspectPort)
    say(`memory over ${log}: a second signal from each user (each actor reloaded from its snapshot)`)
    const { result: second } = await oncePerUser()
    const idle = await settle(service)
    // Each user's second signal went on in the session its first one started: the state came back.
    const reloaded = await withDb(url, (sql) =>
      Effect.map(
        sql<{ readonly n: number }>`SELECT count(*)::int AS n FROM sessions WHERE org_id = ${tenant.orgId} AND signal_count = 2`,
        (rows) => rows[0]!.n
      ))
    if (reloaded !== options.memoryUsers) {
      throw new Error(`memory: ${reloaded} of ${options.memoryUsers} users' second signals went on in their first session`)
    }
    // What the idle node spends keeping 100,000 users' timers, caches and polls.
    const idleCpuFrom = cpuMsOf(service.pid)
    const idleCpuS = smoke ? 1 : 5
    await sleep(idleCpuS * 1000)
    const idleCpuPct = round(((cpuMsOf(service.pid) - idleCpuFrom) / (idleCpuS * 1000)) * 100)
    const heapIdle = await heapAfterGc(inspectPort)
    const perUser = (bytes: number) => Math.round(bytes / options.memoryUsers)
    bench.record({
      scenario: "memory",
      log,
      figures: {
        users: options.memoryUsers,
        signals_per_s: Math.round(first.signals / first.seconds),
        reload_signals_per_s: Math.round(second.signals / second.seconds),
        errors: first.errors + second.errors,
        pending: first.pending + second.pending,
        reloaded,
        rss_baseline_mb: round(baseline / 1048576),
        rss_loaded_mb: round(loaded / 1048576),
        rss_peak_mb: round(rssPeakOf(service.pid) / 1048576),
        rss_idle_first_mb: round(firstIdle.rss / 1048576),
        rss_idle_mb: round(idle.rss / 1048576),
        bytes_per_idle_user: perUser(idle.rss - baseline),
        reload_growth_bytes_per_user: perUser(idle.rss - firstIdle.rss),
        heap_baseline_mb: round(heapBaseline / 1048576),
        heap_idle_mb: round(heapIdle / 1048576),
        heap_bytes_per_idle_user: perUser(heapIdle - heapBaseline),
        heap_reload_growth_bytes_per_user: perUser(heapIdle - heapFirst),
        idle_cpu_pct: idleCpuPct,
        evicted_after_s: idle.evictedAfterS,
        // When the service logged its idle compaction, counted from the end of the load (absent:
        // not within the wait, so the idle figures are uncompacted ones).
        ...(idle.compactedAfterS === undefined ? {} : { compacted_after_s: idle.compactedAfterS })
      }
    })
  } finally {
    await service.stop()
  }
}
