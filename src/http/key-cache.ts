import { Deferred, Effect, Exit } from "effect"

/**
 * What keys resolved to, kept until they expire, the cache is full (the least recently used go
 * first) or the whole cache is dropped. Concurrent lookups of one key share one query. A lookup
 * in flight when the cache is dropped answers its callers but is not kept (it may have read what
 * the drop was for), and a failed lookup is not kept at all.
 *
 * Lean on purpose: a node keeps one entry per active key (100,000 users, 100,000 entries), so an
 * entry is the answer and its expiry time and nothing else.
 */
export interface KeyCache<A> {
  readonly get: (key: string) => Effect.Effect<A>
  /** Drops every entry, and the lookups in flight from being kept. */
  readonly clear: () => void
  /** Drops the expired entries (they would otherwise stay until their key is used again). */
  readonly sweep: () => void
  readonly size: () => number
}

interface Entry<A> {
  readonly value: A
  readonly expiresAt: number
}

export const makeKeyCache = <A>(options: {
  readonly lookup: (key: string) => Effect.Effect<A>
  readonly capacity: number
  /** How long an answer is kept from the moment it arrives, in ms (read per answer; 0 keeps nothing). */
  readonly timeToLiveMs: () => number
  readonly now?: () => number
}): KeyCache<A> => {
  const now = options.now ?? Date.now
  // A Map iterates in insertion order: an entry used is moved to the end, so the first is the least recently used.
  const entries = new Map<string, Entry<A>>()
  const pending = new Map<string, Deferred.Deferred<A>>()
  let generation = 0

  const keep = (key: string, value: A) => {
    const ttl = options.timeToLiveMs()
    if (ttl <= 0) return
    entries.set(key, { value, expiresAt: now() + ttl })
    if (entries.size > options.capacity) entries.delete(entries.keys().next().value!)
  }

  const get = (key: string): Effect.Effect<A> =>
    Effect.suspend(() => {
      const entry = entries.get(key)
      if (entry !== undefined) {
        entries.delete(key)
        if (entry.expiresAt > now()) {
          entries.set(key, entry)
          return Effect.succeed(entry.value)
        }
      }
      const inFlight = pending.get(key)
      if (inFlight !== undefined) return Deferred.await(inFlight)
      const deferred = Deferred.makeUnsafe<A>()
      pending.set(key, deferred)
      const startedIn = generation
      const settle = (exit: Exit.Exit<A>) =>
        Effect.sync(() => {
          if (pending.get(key) === deferred) pending.delete(key)
          if (Exit.isSuccess(exit) && generation === startedIn) keep(key, exit.value)
          Deferred.doneUnsafe(deferred, exit)
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
    sweep: () => {
      const t = now()
      for (const [key, entry] of entries) if (entry.expiresAt <= t) entries.delete(key)
    },
    size: () => entries.size
  }
}
