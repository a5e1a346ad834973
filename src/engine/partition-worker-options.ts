import type { Effect } from "effect"
import type { Environment } from "../domain/environments.ts"
import type { SignalRecord } from "../domain/records.ts"
import type { FoldSettings } from "../domain/user-state.ts"
import type { Outcome } from "../domain/verdict.ts"
import type { LogEntry } from "../log/signal-log.ts"
import type { EngineMetrics } from "../observability/metrics.ts"
import type { DatabaseHealth } from "../store/database-health.ts"
import type { RuleCache } from "./rule-cache.ts"
import type { ScopeTotals } from "./scope-totals.ts"

/** What a processed batch answers: a verdict per signal, an outcome per goal command. */
export interface Processed {
  readonly outcomes: ReadonlyArray<Outcome>
  /** goal-drift signals the fold detected, for the engine to append (live runs only). */
  readonly drifts: ReadonlyArray<SignalRecord>
}

/** A session whose inactivity timer is running on this node. */
export interface Timer {
  readonly userId: string
  readonly orgId: string
  readonly environment: Environment
  readonly sessionId: string
  readonly lastActivityAt: string
  readonly due: number
}

/** How a partition worker runs: live (timers, rules, write-behind) or as a replay. */
export interface PartitionWorkerOptions {
  readonly log: string
  readonly partition: number
  /** Replay folds without starting timers (ticks are already in the log). */
  readonly timers: boolean
  /**
   * Whether folds enqueue webhook events (default true). Replay passes false: what it re-folds
   * was notified when it first happened.
   */
  readonly notify?: boolean | undefined
  /**
   * Whether the database answers: a batch that failed while it is down is retried once it is
   * back, at once (not after the backoff grown meanwhile). Without it, the backoff alone.
   */
  readonly database?: DatabaseHealth["Service"] | undefined
  /** The rules in force; without them (replay) no rule is evaluated. */
  readonly rules?: RuleCache["Service"] | undefined
  /**
   * The node's shared-scope totals: this partition's counts are read live from here by the
   * node's other partitions, and theirs (and other nodes') read from it. Without them (replay,
   * unit tests) a shared budget sees this partition's usage only.
   */
  readonly shared?: ScopeTotals["Service"] | undefined
  /**
   * Replay from a time: records before it (epoch ms) are folded, to rebuild the state as of that
   * time, but only what records at or after it change is written.
   */
  readonly projectFrom?: number | undefined
  readonly settings?: FoldSettings | undefined
  /**
   * Replay: actor states are written by `flush` (before evicting, and at the end), not with
   * every batch, since a replay interrupted half-way is run again from the start anyway.
   */
  readonly deferSnapshots?: boolean | undefined
  /**
   * Answer a batch's outcomes once it is folded, its projections committed behind (the live
   * engine), with at most this many records folded and not committed. Without it (replay, tests)
   * `process` answers once the batch committed.
   */
  readonly writeBehind?: {
    readonly maxLag: number
    /**
     * The partition's records in [from, until), read from the log: after another owner moved the
     * partition on, what this one folded past the stored offset is folded again from them.
     */
    readonly reread?: ((from: number, until: number) => Effect.Effect<ReadonlyArray<LogEntry>>) | undefined
    /** Other nodes watch shared budgets' counts: answer a batch that moved one once it is committed. */
    readonly announceFirst?: boolean | undefined
  } | undefined
  /** Where commit durations are recorded (the live engine's). */
  readonly metrics?: EngineMetrics | undefined
}
