/** Spec §8: five attempts, then the target (a webhook, a channel) is failing. */
export const maxAttempts = 5

/**
 * Delays before attempts 2..5 (spec §6.4; attempt 1 is immediate). A table, not a `Schedule`:
 * the next attempt time is persisted per delivery (so a restart neither loses nor repeats an
 * attempt) and computed in the same UPDATE that records the failed attempt, so what is needed
 * is "delay after failed attempt n", a pure lookup, rather than a stateful schedule driven in
 * memory by one fiber.
 */
export const retryDelaysMs: ReadonlyArray<number> = [30_000, 300_000, 1_800_000, 7_200_000]

/** The delay after failed attempt `attempt` (1-based), scaled; undefined after the last one. */
export const retryDelayAfter = (attempt: number, scale: number): number | undefined => {
  const d = retryDelaysMs[attempt - 1]
  return d === undefined || attempt >= maxAttempts ? undefined : Math.max(0, Math.round(d * scale))
}

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
