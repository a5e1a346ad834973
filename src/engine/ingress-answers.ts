import { Data } from "effect"
import type { Verdict } from "../domain/verdict.ts"

/** What the Ingress answers: a signal's outcome, why one is pending, a failed append. */

/**
 * Why a durable signal has no verdict yet: no node owned its partition (a restart or rebalance),
 * the owner could not be reached, the owner did not answer within INGEST_WAIT, or PostgreSQL is
 * out of reach (the log took the signal; its user's state is folded once the database is back).
 */
export type PendingReason = "no_owner" | "forward_failed" | "timeout" | "database_unavailable"

export const pendingMessages: Record<PendingReason, string> = {
  no_owner: "no node owns this user's partition right now (restart or rebalance); the signal is durable and will be judged when one does",
  forward_failed: "the node owning this user's partition could not be reached; the signal is durable and will be judged by it",
  timeout: "the signal is durable but was not judged within the wait",
  database_unavailable:
    "the signal is durable; the database is unavailable, so the rules that need the user's state (budgets, limits) are judged once it is back"
}

export type Submitted =
  | { readonly _tag: "Processed"; readonly verdict: Verdict }
  /** Durable in the log, not yet processed within the wait, and no rule judged at acceptance blocks it. */
  | { readonly _tag: "Pending"; readonly signal_id: string; readonly reason: PendingReason }
  /** Durable, and blocked by a rule judged at acceptance (with its session when the actor answered in time). */
  | { readonly _tag: "Judged"; readonly verdict: Omit<Verdict, "session_id"> & { readonly session_id?: string } }

/** A verdict judged at acceptance from the signal alone: a block whatever the user's state. */
export type AcceptanceVerdict = Omit<Verdict, "session_id">

/**
 * The append of a request's signals failed (the log unavailable or too slow: they may still be
 * written). `judged` holds, per signal in order, the block a stateless rule gives it, if any: a
 * block is certain even when the signal's fate in the log is not.
 */
export class NotAppended extends Data.TaggedError("NotAppended")<{
  readonly message: string
  /** The signals are certainly not in the log; otherwise they may be (see LogUnavailable). */
  readonly notWritten: boolean
  readonly judged: ReadonlyArray<AcceptanceVerdict | undefined>
}> {}
