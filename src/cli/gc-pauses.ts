import { PerformanceObserver } from "node:perf_hooks"

/**
 * Counts how long this process's main thread stands still for garbage collection from now on
 * (every collection's pause, as Node's `gc` performance entries time them). `stop` ends the
 * count and answers it in milliseconds. `signal-engine replay` reports it beside its CPU time:
 * the garbage a replay makes is a large part of its own work (docs/benchmarks.md).
 *
 * Node queues a collection's entry for its observers on the next turn of the event loop, so
 * `stop` lets one turn pass and takes what is queued, the collections just before it included.
 */
export const countGcPauses = () => {
  let ms = 0
  const add = (entries: ReadonlyArray<{ readonly duration: number }>) => {
    for (const entry of entries) ms += entry.duration
  }
  const observer = new PerformanceObserver((list) => add(list.getEntries()))
  observer.observe({ entryTypes: ["gc"] })
  return {
    stop: async (): Promise<number> => {
      await new Promise<void>((resolve) => setImmediate(resolve))
      add(observer.takeRecords())
      observer.disconnect()
      return ms
    }
  }
}
