/**
 * Per-user timers, indexed by due time (a timing wheel of one-second buckets) so that finding the
 * due ones costs what is due, not the number of users who have a timer. An idle node sweeps
 * every second; with a scan of every user that sweep allocated and walked ~100 bytes per user
 * per second, which kept V8's memory reducer from ever seeing the process idle.
 *
 * Each user has a list of timers (one per open session); a user sits in the bucket of the
 * second of its earliest due timer. Buckets before the sweep cursor are always empty: a timer due
 * in the past goes into the cursor's bucket.
 */
export interface Timed {
  readonly userId: string
  readonly due: number
}

export interface TimerIndex<T extends Timed> {
  /** Replaces the user's timers (none: forgets the user). */
  readonly set: (userId: string, timers: ReadonlyArray<T>) => void
  readonly get: (userId: string) => ReadonlyArray<T>
  /** The timers due at `now` (`due <= now`), removed; the users' later timers stay. */
  readonly takeDue: (now: number) => ReadonlyArray<T>
  readonly size: () => number
}

const second = (ms: number) => Math.floor(ms / 1000)

export const makeTimerIndex = <T extends Timed>(): TimerIndex<T> => {
  /** Each user's timers and the bucket the user is in. */
  const byUser = new Map<string, { readonly timers: ReadonlyArray<T>; readonly at: number }>()
  const buckets = new Map<number, Set<string>>()
  let cursor: number | undefined
  let count = 0

  const set = (userId: string, timers: ReadonlyArray<T>) => {
    const previous = byUser.get(userId)
    if (previous) {
      count -= previous.timers.length
      const bucket = buckets.get(previous.at)
      bucket?.delete(userId)
      if (bucket?.size === 0) buckets.delete(previous.at)
    }
    if (timers.length === 0) {
      byUser.delete(userId)
      return
    }
    count += timers.length
    let earliest = timers[0]!.due
    for (const t of timers) if (t.due < earliest) earliest = t.due
    const at = cursor === undefined ? second(earliest) : Math.max(second(earliest), cursor)
    byUser.set(userId, { timers, at })
    const bucket = buckets.get(at)
    if (bucket) bucket.add(userId)
    else buckets.set(at, new Set([userId]))
  }

  const takeDue = (now: number): ReadonlyArray<T> => {
    const upTo = second(now)
    // Walk the seconds since the last sweep, or the buckets themselves when there are fewer.
    const keys: Array<number> = []
    if (cursor !== undefined && upTo - cursor <= buckets.size) {
      for (let s = cursor; s <= upTo; s++) if (buckets.has(s)) keys.push(s)
    } else {
      for (const s of buckets.keys()) if (s <= upTo) keys.push(s)
      keys.sort((a, b) => a - b)
    }
    cursor = cursor === undefined ? upTo : Math.max(cursor, upTo)
    const due: Array<T> = []
    for (const s of keys) {
      const users = buckets.get(s)
      if (!users) continue
      for (const userId of [...users]) {
        const later: Array<T> = []
        for (const t of byUser.get(userId)?.timers ?? []) (t.due <= now ? due : later).push(t)
        set(userId, later)
      }
    }
    return due
  }

  return {
    set,
    get: (userId) => byUser.get(userId)?.timers ?? [],
    takeDue,
    size: () => count
  }
}
