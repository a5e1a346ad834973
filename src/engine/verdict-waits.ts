import { Deferred, Effect } from "effect"
import type { Outcome } from "../domain/verdict.ts"

/** One request's wait; waits on the same id (copies of one keyed signal) form a queue. */
interface Wait {
  readonly deferred: Deferred.Deferred<Outcome | undefined>
  readonly deadline: number
  next: Wait | undefined
}

/**
 * The requests waiting for their record's outcome, by id, each id's waits in the order they were
 * registered. A wait carries its deadline: `expire` answers the expired ones with `undefined`, so
 * a request costs a map entry, not a timer of its own.
 */
export class WaitQueues {
  /** The first wait of each id; the others follow it through `next`. */
  private readonly first = new Map<string, Wait>()
  /**
   * No wait ends before this (a lower bound: completed waits leave without raising it). Most
   * waits end with their outcome long before their deadline, so most sweeps find nothing due
   * and return at once instead of walking every wait.
   */
  private earliest = Number.POSITIVE_INFINITY

  get size(): number {
    return this.first.size
  }

  register(id: string, deadline: number): Deferred.Deferred<Outcome | undefined> {
    const deferred = Deferred.makeUnsafe<Outcome | undefined>()
    const wait: Wait = { deferred, deadline, next: undefined }
    let tail = this.first.get(id)
    if (tail === undefined) this.first.set(id, wait)
    else {
      while (tail.next !== undefined) tail = tail.next
      tail.next = wait
    }
    if (deadline < this.earliest) this.earliest = deadline
    return deferred
  }

  /** Takes a wait out before its deadline, answering it `undefined`. */
  cancel(id: string, deferred: Deferred.Deferred<Outcome | undefined>): void {
    let previous: Wait | undefined
    for (let wait = this.first.get(id); wait !== undefined; previous = wait, wait = wait.next) {
      if (wait.deferred !== deferred) continue
      if (previous === undefined) this.unlinkFirst(id, wait)
      else previous.next = wait.next
      Deferred.doneUnsafe(deferred, Effect.succeed(undefined))
      return
    }
  }

  /** Answers the first wait of `id` with `outcome`; false when nobody waits for it. */
  answer(id: string, outcome: Outcome): boolean {
    const wait = this.first.get(id)
    if (wait === undefined) return false
    this.unlinkFirst(id, wait)
    Deferred.doneUnsafe(wait.deferred, Effect.succeed(outcome))
    return true
  }

  /** Answers every wait past its deadline at `now` with `undefined`. */
  expire(now: number): void {
    if (now < this.earliest) return
    this.earliest = Number.POSITIVE_INFINITY
    // Answered once every queue is relinked: an answer can resume its request at once, and a
    // request that completes outcomes must not find an expired wait still queued.
    const expired: Array<Wait> = []
    for (const [id, first] of this.first) {
      let kept: Wait | undefined
      let last: Wait | undefined
      for (let wait: Wait | undefined = first; wait !== undefined; wait = wait.next) {
        if (wait.deadline > now) {
          if (wait.deadline < this.earliest) this.earliest = wait.deadline
          if (last === undefined) kept = wait
          else last.next = wait
          last = wait
          continue
        }
        expired.push(wait)
      }
      if (last !== undefined) last.next = undefined
      if (kept === undefined) this.first.delete(id)
      else if (kept !== first) this.first.set(id, kept)
    }
    for (const wait of expired) Deferred.doneUnsafe(wait.deferred, Effect.succeed(undefined))
  }

  private unlinkFirst(id: string, wait: Wait): void {
    if (wait.next === undefined) this.first.delete(id)
    else this.first.set(id, wait.next)
  }
}
