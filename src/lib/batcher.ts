import { Clock, Deferred, Duration, Effect, Exit, Option, Queue, type Scope } from "effect"

interface Pending<A, B, E> {
  readonly items: ReadonlyArray<A>
  readonly done: Deferred.Deferred<ReadonlyArray<B>, E>
}

/**
 * Micro-batches concurrent calls: the first waiting call opens a batch, which collects further
 * calls for up to `window` or until it holds `maxItems` items, then `write` runs once for all of
 * them (one batch in flight at a time, so calls that arrive meanwhile form the next batch).
 * `write` answers one result per item, in order; each caller gets the results of its items.
 * On scope close the batch in flight completes and calls still queued (or made later) fail with `closed`.
 */
export const makeBatcher = Effect.fnUntraced(function*<A, B, E>(options: {
  readonly maxItems: number
  readonly window: Duration.Input
  readonly write: (items: ReadonlyArray<A>) => Effect.Effect<ReadonlyArray<B>, E>
  readonly closed: () => E
}): Effect.fn.Return<(items: ReadonlyArray<A>) => Effect.Effect<ReadonlyArray<B>, E>, never, Scope.Scope> {
  const queue = yield* Queue.unbounded<Pending<A, B, E>>()
  const windowMillis = Duration.toMillis(Duration.fromInputUnsafe(options.window))

  // The calls taken but not yet answered, so a closing scope can answer them.
  let batch: Array<Pending<A, B, E>> = []

  const collect = Effect.gen(function*() {
    const first = yield* Queue.take(queue)
    batch = [first]
    let size = first.items.length
    const deadline = (yield* Clock.currentTimeMillis) + windowMillis
    while (size < options.maxItems) {
      const ready = yield* Queue.poll(queue)
      if (Option.isSome(ready)) {
        batch.push(ready.value)
        size += ready.value.items.length
        continue
      }
      const remaining = deadline - (yield* Clock.currentTimeMillis)
      if (remaining <= 0) break
      // Interrupting a waiting take loses nothing: the item is only removed once taken.
      const next = yield* Effect.timeoutOption(Queue.take(queue), remaining)
      if (Option.isNone(next)) break
      batch.push(next.value)
      size += next.value.items.length
    }
    return batch
  })

  const flush = (batch: ReadonlyArray<Pending<A, B, E>>) =>
    Effect.gen(function*() {
      const exit = yield* Effect.exit(options.write(batch.flatMap((p) => p.items)))
      let at = 0
      for (const pending of batch) {
        const n = pending.items.length
        const mine = Exit.map(exit, (results) => results.slice(at, at + n))
        at += n
        yield* Deferred.done(pending.done, mine)
      }
    })

  let open = true
  // Added before the loop is forked, so it runs after the loop has stopped (finalizers run in
  // reverse): a batch in flight has been answered, the rest are told the batcher is closed.
  yield* Effect.addFinalizer(() =>
    Effect.gen(function*() {
      open = false
      const left = yield* Queue.clear(queue).pipe(Effect.catchCause(() => Effect.succeed([])))
      // Failing an answered call is a no-op, so the last batch can be included blindly.
      for (const pending of [...batch, ...left]) yield* Deferred.fail(pending.done, options.closed())
    })
  )

  // The write itself is uninterruptible: a closing scope waits for the batch in flight, so a
  // caller never sees "interrupted" for records that may have been written.
  yield* collect.pipe(
    Effect.flatMap((batch) => Effect.uninterruptible(flush(batch))),
    Effect.forever,
    Effect.forkScoped
  )

  return (items: ReadonlyArray<A>): Effect.Effect<ReadonlyArray<B>, E> =>
    items.length === 0
      ? Effect.succeed([])
      : Effect.suspend(() => {
        // Checked and enqueued in one synchronous step, so no call slips in after the close.
        if (!open) return Effect.fail(options.closed())
        const done = Deferred.makeUnsafe<ReadonlyArray<B>, E>()
        Queue.offerUnsafe(queue, { items, done })
        return Deferred.await(done)
      })
})
