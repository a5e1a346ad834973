/**
 * The replay baseline: reads every partition of the configured log (DATABASE_URL, LOG_PARTITIONS,
 * KAFKA_* as the service reads them) through SignalLog.readPartition with a handler that does
 * nothing, so what is measured is fetching and decoding the records, as replay does before folding.
 * Prints one JSON line: {records, seconds, cpu_s, gc_s} (cpu_s: the process's CPU, start-up
 * included, as the replay command reports its own; gc_s: its pauses for garbage collection while
 * reading, as the replay command reports them).
 */
import { Effect, Layer } from "effect"
import { SignalLogLive } from "../src/main.ts"
import { countGcPauses } from "../src/cli/gc-pauses.ts"
import { SignalLog } from "../src/log/signal-log.ts"
import { databaseFromUrl } from "../src/store/database.ts"

const program = Effect.gen(function*() {
  const log = yield* SignalLog
  let records = 0
  const started = performance.now()
  const gc = countGcPauses()
  for (let partition = 0; partition < log.partitions; partition++) {
    yield* log.readPartition(partition, 0, (entries) => Effect.sync(() => void (records += entries.length)))
  }
  const seconds = (performance.now() - started) / 1000
  const cpu = process.cpuUsage()
  const gcS = (yield* Effect.promise(() => gc.stop())) / 1000
  console.log(JSON.stringify({ records, seconds, cpu_s: (cpu.user + cpu.system) / 1e6, gc_s: gcS }))
})

const url = process.env.DATABASE_URL
if (!url) throw new Error("DATABASE_URL is required")
Effect.runPromise(program.pipe(Effect.provide(SignalLogLive.pipe(Layer.provide(databaseFromUrl(url)))), Effect.scoped)).catch(
  (error: unknown) => {
    console.error(error)
    process.exit(1)
  }
)
