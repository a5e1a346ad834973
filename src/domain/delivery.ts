import { retryDelayAfter } from "./webhooks.ts"

/** What one attempt to deliver (a webhook event, a notification) came to. */
export interface AttemptResult {
  readonly delivered: boolean
  readonly status_code: number | null
  readonly latency_ms: number
  readonly error: string | null
}

/** What recording an attempt did; `stale` when another dispatcher had recorded it (a lost lease). */
export type AttemptOutcome = "delivered" | "retry" | "gave-up" | "stale"

/**
 * Attempt number `attempt` judged: delivered, to be retried after `delayMs` (the webhooks' delay
 * table, scaled), or given up; and the status its row takes.
 */
export const judgeAttempt = (attempt: number, result: AttemptResult, retryScale: number) => {
  const delayMs = result.delivered ? undefined : retryDelayAfter(attempt, retryScale)
  const outcome: Exclude<AttemptOutcome, "stale"> = result.delivered ? "delivered" : delayMs !== undefined ? "retry" : "gave-up"
  const status = outcome === "delivered" ? "delivered" : outcome === "retry" ? "pending" : "failed"
  return { outcome, delayMs, status } as const
}
