import { Session } from "node:inspector/promises"
import { performance } from "node:perf_hooks"
import { getHeapStatistics } from "node:v8"
import { Config, Duration, Effect, Layer, Schedule } from "effect"

/** Below this share of the event loop's time a second is idle (an idle node still polls and sweeps). */
const idleUtilization = 0.1
/** Only worth a pause when V8 holds at least this much more than it uses. */
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
 */
export const IdleCompaction = Layer.effectDiscard(
  Effect.gen(function*() {
    const after = yield* Config.Duration("IDLE_COMPACTION_AFTER").pipe(Config.withDefault(Duration.seconds(10)), Effect.orDie)
    const afterMs = Duration.toMillis(after)
    if (afterMs <= 0) return
    let last = performance.eventLoopUtilization()
    let idleSince = performance.now()
    let compacted = false
    const check = Effect.gen(function*() {
      const now = performance.eventLoopUtilization()
      const busy = performance.eventLoopUtilization(now, last).utilization > idleUtilization
      last = now
      if (busy) {
        idleSince = performance.now()
        compacted = false
        return
      }
      if (compacted || performance.now() - idleSince < afterMs) return
      compacted = true
      const slack = heapSlack()
      if (slack < minSlackBytes) return
      yield* compactHeap
      yield* Effect.logInfo(`idle: heap compacted (${Math.round((slack - heapSlack()) / 1048576)} MB returned)`)
    })
    // A runtime without the inspector (a Node built without it) cannot compact: said once, then off.
    yield* check.pipe(
      Effect.repeat(Schedule.spaced("1 second")),
      Effect.catch((e) => Effect.logWarning(`idle compaction off: ${e.message}`)),
      Effect.forkScoped
    )
  })
)
