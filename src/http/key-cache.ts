import { Deferred, Effect, Exit } from "effect"

/**
 * What keys resolved to, kept until they expire, the cache is full (the least recently used go
 * first) or the whole cache is dropped. Concurrent lookups of one key share one query. A lookup
 * in flight when the cache is dropped answers its callers but is not kept (it may have read what
 * the drop was for), and a failed lookup is not kept at all.
 *
 * Through a database outage: a lookup that fails because the database is out of reach
 * (`isOutage`) is answered with the key's last answer if that arrived at most `outageGraceMs` ago,
 * even past its expiry or after `expire` (the changes the database announced dropped it, so it is
 * what the key was as the outage began). `clear` drops those too.
 *
 * Lean on purpose: a node keeps one entry per active key (100,000 users, 100,000 entries), so an
 * entry is the answer and its two times and nothing else.
 */
export interface KeyCache<A> {
  readonly get: (key: string) => Effect.Effect<A>
  /** Drops every entry, and the lookups in flight from being kept. */
  readonly clear: () => void
  /** Looks every key up again from now on; the answers stay only to stand in during an outage. */
  readonly expire: () => void
  /** Drops the expired entries (they would otherwise stay until their key is used again). */
  readonly sweep: () => void
  readonly size: () => number
}

interface Entry<A> {
  readonly value: A
  readonly expiresAt: number
  /** When the answer arrived. */
  readonly at: number
}

export const makeKeyCache = <A>(options: {
  readonly lookup: (key: string) => Effect.Effect<A>
  readonly capacity: number
  /** How long an answer is kept from the moment it arrives, in ms (read per answer; 0 keeps nothing). */
  readonly timeToLiveMs: () => number
  /** How long an answer may stand in for lookups failing with an outage, in ms (0: never). */
  readonly outageGraceMs?: number
  /** Whether a lookup's failure (its defect) means the database is out of reach. */
  readonly isOutage?: (defect: unknown) => boolean
  readonly now?: () => number
}): KeyCache<A> => {
  const now = options.now ?? Date.now
  const grace = options.outageGraceMs ?? 0
  const isOutage = options.isOutage ?? (() => false)
  // A Map iterates in insertion order: an entry used is moved to the end, so the first is the least recently used.
  const entries = new Map<string, Entry<A>>()
  const pending = new Map<string, Deferred.Deferred<A>>()
  let generation = 0

  const keep = (key: string, value: A) => {
    const ttl = Math.max(0, options.timeToLiveMs())
    if (ttl === 0 && grace === 0) return
    const at = now()
    entries.delete(key)
    entries.set(key, { value, expiresAt: at + ttl, at })
    if (entries.size > options.capacity) entries.delete(entries.keys().next().value!)
  }

  /** The last answer of a key, if it may stand in for a lookup that met an outage. */
  const standIn = (key: string, exit: Exit.Exit<A>): Exit.Exit<A> => {
    if (Exit.isSuccess(exit) || grace === 0) return exit
    const entry = entries.get(key)
    if (entry === undefined || entry.at + grace <= now()) return exit
    const defects = exit.cause.reasons.filter((r) => r._tag === "Die")
    return defects.length > 0 && defects.every((r) => isOutage(r.defect)) ? Exit.succeed(entry.value) : exit
  }

  const get = (key: string): Effect.Effect<A> =>
    Effect.suspend(() => {
      const entry = entries.get(key)
      if (entry !== undefined && entry.expiresAt > now()) {
        entries.delete(key)
        entries.set(key, entry)
        return Effect.succeed(entry.value)
      }
      const inFlight = pending.get(key)
      if (inFlight !== undefined) return Deferred.await(inFlight)
      const deferred = Deferred.makeUnsafe<A>()
      pending.set(key, deferred)
      const startedIn = generation
      const settle = (looked: Exit.Exit<A>) =>
        Effect.sync(() => {
          if (pending.get(key) === deferred) pending.delete(key)
          if (Exit.isSuccess(looked) && generation === startedIn) keep(key, looked.value)
          Deferred.doneUnsafe(deferred, generation === startedIn ? standIn(key, looked) : looked)
        })
      // The lookup runs on a fiber of its own: a caller that goes away (its client disconnected)
      // stops only its own wait, and the others sharing the lookup still get the answer.
      return Effect.andThen(
        Effect.forkDetach(Effect.flatMap(Effect.exit(options.lookup(key)), settle)),
        Deferred.await(deferred)
      )
    })

  return {
    get,
    clear: () => {
      generation++
      entries.clear()
      pending.clear()
    },
    expire: () => {
      for (const [key, entry] of entries) entries.set(key, { ...entry, expiresAt: 0 })
    },
    sweep: () => {
      const t = now()
      for (const [key, entry] of entries) if (entry.expiresAt <= t && entry.at + grace <= t) entries.delete(key)
    },
    size: () => entries.size
  }
}
