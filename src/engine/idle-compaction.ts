import { Session } from "node:inspector/promises"
import { performance } from "node:perf_hooks"
import { getHeapStatistics } from "node:v8"
import { Config, Duration, Effect, Layer, Schedule } from "effect"

/** Below this share of the event loop's time a second is idle (an idle node still polls and sweeps). */
const idleUtilization = 0.1
/**
 * Only worth a pause when V8 holds at least this much more than it uses, or the process's
 * resident memory is at least this much above where it last settled.
 */
const minSlackBytes = 32 * 1024 * 1024

/**
 * After a burst V8 keeps the pages its heap grew to: its memory reducer waits for a low
 * allocation rate that it only measures at collections, so an idle process keeps its high-water
 * mark indefinitely (measured: 480 MB resident for 60 MB live, still there after 90 s idle).
 * This asks V8 for a memory-reducing collection (the one `LowMemoryNotification` runs, through the
 * in-process inspector: no port, no flag) once the node has been idle for a while after being busy.
 * It pauses the event loop for a few hundred milliseconds, so it runs only when nothing happens.
 */
export const compactHeap: Effect.Effect<void, Error> = Effect.tryPromise({
  try: async () => {
    const session = new Session()
    session.connect()
    try {
      // Twice: what the first frees (external memory, finalizers) is collectable by the second.
      await session.post("HeapProfiler.collectGarbage")
      await session.post("HeapProfiler.collectGarbage")
    } finally {
      session.disconnect()
    }
  },
  catch: (cause) => new Error(`heap compaction is unavailable: ${String(cause)}`)
})

export const heapSlack = (): number => {
  const heap = getHeapStatistics()
  return heap.total_heap_size - heap.used_heap_size
}

/**
 * `IDLE_COMPACTION_AFTER` (default 10 s; 0 disables): how long the event loop must stay under
 * 10% busy before the heap is compacted, once per idle period.
 *
 * Two signs that there is memory to give back: the heap's slack, and resident memory above its
 * floor (the lowest it has been since the last compaction, or since start). The second is for
 * when V8's own collection has already shrunk the heap after the burst: its freed pages stay
 * resident, and the slack alone no longer shows them (measured after a burst and one major
 * collection: 3 MB of slack, 389 MB resident, 99 MB after compacting).
 */
export const IdleCompaction = Layer.effectDiscard(
  Effect.gen(function*() {
    const after = yield* Config.Duration("IDLE_COMPACTION_AFTER").pipe(Config.withDefault(Duration.seconds(10)), Effect.orDie)
    const afterMs = Duration.toMillis(after)
    if (afterMs <= 0) return
    let last = performance.eventLoopUtilization()
    let idleSince = performance.now()
    let compacted = false
    let floor = process.memoryUsage.rss()
    const check = Effect.gen(function*() {
      const now = performance.eventLoopUtilization()
      const busy = performance.eventLoopUtilization(now, last).utilization > idleUtilization
      last = now
      const resident = process.memoryUsage.rss()
      floor = Math.min(floor, resident)
      if (busy) {
        idleSince = performance.now()
        compacted = false
        return
      }
      if (compacted || performance.now() - idleSince < afterMs) return
      compacted = true
      if (heapSlack() < minSlackBytes && resident - floor < minSlackBytes) return
      yield* compactHeap
      // Its own pause is not activity: the idle period goes on, and it compacts once.
      last = performance.eventLoopUtilization()
      floor = process.memoryUsage.rss()
      yield* Effect.logInfo(`idle: heap compacted (${Math.max(0, Math.round((resident - floor) / 1048576))} MB returned)`)
    })
    // A runtime without the inspector (a Node built without it) cannot compact: said once, then off.
    yield* check.pipe(
      Effect.repeat(Schedule.spaced("1 second")),
      Effect.catch((e) => Effect.logWarning(`idle compaction off: ${e.message}`)),
      Effect.forkScoped
    )
  })
)
