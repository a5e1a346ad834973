import { Clock, Config, Effect, Schema } from "effect"
import { type LogEntry, SignalLog } from "../log/signal-log.ts"
import { buildEventReadIndexes, dropEventReadIndexes } from "../store/migrations.ts"
import { Projections } from "../store/projections.ts"
import { holdForReplay } from "../store/replay-lock.ts"
import { noteReplayFinished, noteReplayStarted } from "../store/unfinished-replays.ts"
import { foldSettings } from "./fold-settings.ts"
import { makePartitionWorker } from "./partition-worker.ts"

/** The log lacks the start of a partition the replay was asked to rebuild. */
export class LogIncomplete extends Schema.TaggedError<LogIncomplete>()("LogIncomplete", {
  message: Schema.String
}) {}

/** A replay asked for something the log cannot give (a partition it does not have). */
export class ReplayRefused extends Schema.TaggedError<ReplayRefused>()("ReplayRefused", {
  message: Schema.String
}) {}

export interface ReplayProgress {
  readonly partition: number
  readonly done: number
  readonly total: number
}

/**
 * The records deleted from the start of the partitions (retention, by hand). A fold of what is
 * left of a partition is not what its whole log folded to (sessions, budget counters, goals), and
 * a full replay empties the tables first: refused unless `allowed`.
 */
const missingRecords = (partitions: ReadonlyArray<number>, starts: ReadonlyArray<number>, allowed: boolean) =>
  Effect.gen(function*() {
    const gone = partitions.filter((p) => (starts[p] ?? 0) > 0)
    if (gone.length === 0) return 0
    const what = gone.map((p) => `${p} (offsets 0..${starts[p]! - 1})`).join(", ")
    if (!allowed) {
      return yield* new LogIncomplete({
        message: `the log no longer holds the first records of partition(s) ${what}, deleted by retention or by hand; ` +
          "a replay would rebuild the projections without them (--allow-missing-records rebuilds from what is left)"
      })
    }
    yield* Effect.logWarning(`replaying without the first records of partition(s) ${what}`)
    return gone.reduce((n, p) => n + starts[p]!, 0)
  })

/**
 * Rebuilds projections from the log: forgets what the given partitions projected, then folds
 * every record again, from the earliest offset, exactly as the live workers do. It completes
 * no verdicts, starts no timers, enqueues no webhook events and appends nothing: the log already holds every tick, so the
 * result is the projections the live run wrote. The verdicts stored with keyed signals' events,
 * which the log does not hold, are kept across the rebuild (Projections.restoreVerdicts). It refuses to run while a node serves on the
 * database (replay-lock.ts), and holds the database until it ends.
 *
 * With `from`, only what happened at or after that time is forgotten and written again; the
 * records before it are still folded (silently), because the state at `from` is their fold.
 */
export const replay = Effect.fn("replay")(function*(options: {
  readonly partitions?: ReadonlyArray<number> | undefined
  readonly from?: Date | undefined
  readonly onProgress?: ((progress: ReplayProgress) => Effect.Effect<void>) | undefined
  /** Rebuild from what is left when records were deleted from the start of a partition. */
  readonly allowMissingRecords?: boolean | undefined
}) {
  const log = yield* SignalLog
  // Checked first: a partition the log does not have would replay nothing and report success.
  const unknown = (options.partitions ?? []).filter((p) => !Number.isInteger(p) || p < 0 || p >= log.partitions)
  if (unknown.length > 0) {
    return yield* new ReplayRefused({
      message: `the log has no partition ${unknown.join(", ")}: its partitions are 0..${log.partitions - 1} ` +
        `(LOG_PARTITIONS=${log.partitions}); nothing was replayed`
    })
  }
  // Refused while the service runs on this database; a node starting meanwhile waits for the end.
  yield* holdForReplay
  const projections = yield* Projections
  const partitions = options.partitions ?? Array.from({ length: log.partitions }, (_, i) => i)
  const ends = yield* log.endOffsets
  const starts = yield* log.startOffsets
  const missing = yield* missingRecords(partitions, starts, options.allowMissingRecords === true)
  const settings = yield* Effect.orDie(foldSettings)
  // Partitions are independent: a few at a time keep the database busy on every core while
  // this process folds.
  const concurrency = yield* Config.Int("REPLAY_CONCURRENCY").pipe(Config.withDefault(2), Effect.orDie)
  // Records folded and committed together.
  const replayBatch = yield* Config.Int("REPLAY_BATCH").pipe(Config.withDefault(5_000), Effect.orDie)
  // A full rebuild (every partition, from the start) empties the projections at once, up front.
  const full = options.from === undefined && new Set(partitions).size === log.partitions
  let records = 0
  // Noted before anything is emptied; each partition's note is cleared once it is written.
  yield* noteReplayStarted(partitions)
  const replayPartition = Effect.fnUntraced(function*(partition: number) {
    const total = ends[partition] ?? 0
    if (!full) yield* projections.resetPartition(log.name, partition, options.from)
    const worker = yield* makePartitionWorker({
      log: log.name,
      partition,
      timers: false,
      notify: false,
      projectFrom: options.from?.getTime(),
      settings,
      deferSnapshots: true
    })
    // Reads come in the log's own batch sizes; the fold commits in bigger ones (fewer statements,
    // and a session touched many times in a batch is written once).
    let pending: Array<LogEntry> = []
    const processPending = Effect.gen(function*() {
      if (pending.length === 0) return
      const entries = pending
      pending = []
      yield* worker.process(entries, yield* Clock.currentTimeMillis)
      // Bounded memory on huge logs: actors are saved, then go back to their snapshots.
      if (worker.actorCount() > 50_000) {
        yield* worker.flush
        worker.evictIdle(Number.POSITIVE_INFINITY, 0)
      }
      records += entries.length
      if (options.onProgress) yield* options.onProgress({ partition, done: worker.nextOffset(), total })
    })
    yield* log.readPartition(partition, starts[partition] ?? 0, (entries) =>
      Effect.gen(function*() {
        pending.push(...entries)
        if (pending.length >= replayBatch) yield* processPending
      }))
    yield* processPending
    yield* worker.flush
    yield* projections.restoreVerdicts(partition)
    yield* noteReplayFinished(partition)
  })
  const replayAll = Effect.forEach(partitions, replayPartition, { concurrency: Math.max(1, concurrency), discard: true })
  // A full rebuild writes every event again: without the read indexes, then one sort per index
  // (the service is stopped during a replay, so nothing reads them meanwhile). A failed or
  // interrupted replay builds them too; start-up builds any still missing.
  // How long the index builds took: a fixed part of a full replay's time, growing as n log n.
  let indexesMs: number | undefined
  if (full) {
    const buildIndexes = Effect.gen(function*() {
      const started = yield* Clock.currentTimeMillis
      yield* Effect.orDie(buildEventReadIndexes)
      indexesMs = (yield* Clock.currentTimeMillis) - started
    })
    yield* projections.resetAll(log.name)
    yield* Effect.orDie(dropEventReadIndexes)
    yield* replayAll.pipe(Effect.ensuring(buildIndexes))
  } else {
    yield* replayAll
  }
  return { partitions: partitions.length, records, missing, indexesMs }
}, Effect.scoped)
