import type { GoalOutcome } from "./goals.ts"

/** What the engine answers about one signal once its actor has processed it. */
export interface Verdict {
  readonly ok: boolean
  readonly signal_id: string
  readonly session_id: string
  /** Where a rule fired: the deciding rule's action (the first block, else the first rule that fired). */
  readonly action?: "block" | "warn" | "log" | "notify" | "redact"
  readonly rule_id?: string
  readonly message?: string
  /** A retry: the user sent a signal with this idempotency key before; this answers what that one got. */
  readonly duplicate?: true
  /** The prompt completed an off-goal streak: the goal-drift the engine adds to its session, for the adapter to show. */
  readonly drift?: DriftNotice
}

/** A goal drift as the adapter shows it to the person (the signal on the timeline has the evidence too). */
export interface DriftNotice {
  readonly goal_id: string
  /** The goal's description, its first characters. */
  readonly goal: string
  /** When the first off-goal prompt of the streak came. */
  readonly since: string
  readonly off_goal_prompts: number
  /** The off-goal prompts, their first characters: what `goal not-drift` names as the goal's work. */
  readonly prompts: ReadonlyArray<string>
}

/** What a request waits for: the verdict of a signal, or what a goal command came to. */
export type Outcome = Verdict | GoalOutcome

/** The id a request waits on: the signal id, or the goal command id. */
export const outcomeId = (outcome: Outcome): string => ("signal_id" in outcome ? outcome.signal_id : outcome.command_id)

/** A verdict as an event keeps it: the signal's ids are the event's own. */
export interface StoredVerdict {
  readonly ok: boolean
  readonly action?: "block" | "warn" | "log" | "notify" | "redact"
  readonly rule_id?: string
  readonly message?: string
}

/** A stored event as a retry of its signal needs it: where it was counted and what it got. */
export interface KnownEvent {
  readonly id: string
  readonly session_id: string
  readonly log_partition: number
  readonly log_offset: number
  readonly verdict: StoredVerdict | null
}

/** What an event keeps of a verdict (nothing where no rule decided: a retry is then answered `ok`). */
export const stored = (verdict: Verdict | undefined): StoredVerdict | undefined =>
  verdict === undefined || (verdict.ok && verdict.action === undefined)
    ? undefined
    : {
      ok: verdict.ok,
      ...(verdict.action !== undefined ? { action: verdict.action } : {}),
      ...(verdict.rule_id !== undefined ? { rule_id: verdict.rule_id } : {}),
      ...(verdict.message !== undefined ? { message: verdict.message } : {})
    }

/** The answer to a retry of a keyed signal: what its first copy got, in the session it was counted in. */
export const retried = (signalId: string, first: KnownEvent): Verdict => ({
  ok: first.verdict?.ok ?? true,
  signal_id: signalId,
  session_id: first.session_id,
  ...(first.verdict?.action !== undefined ? { action: first.verdict.action } : {}),
  ...(first.verdict?.rule_id !== undefined ? { rule_id: first.verdict.rule_id } : {}),
  ...(first.verdict?.message !== undefined ? { message: first.verdict.message } : {}),
  duplicate: true
})
