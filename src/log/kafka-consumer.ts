import { Cause, Deferred, Effect, Exit, FiberSet, Option, Schedule, Scope, Semaphore } from "effect"
import type { Consumer, KafkaMessage } from "kafkajs"
import { decodeMessages, describe, type KafkaClient, scopedConsumer, unavailable } from "./kafka-client.ts"
import type { BrokerWatch } from "./broker-watch.ts"
import { liveMembers, removeStaleMembers } from "./kafka-membership.ts"
import type { LocalRecords } from "./local-records.ts"
import { range } from "./partitions.ts"
import type { LogEntry, PartitionHandler } from "./signal-log.ts"

const pauseBackoff = (attempt: number) => Math.min(500 * 2 ** attempt, 30_000)

/** What this node knows about one partition of the consumer group. */
interface PartitionState {
  readonly lock: Semaphore.Semaphore
  /** The group generation (our count of joins) `assigned` was answered for, if it is current. */
  assignedIn: number | undefined
  next: number
  stopped: boolean
}

/**
 * KafkaLog's `run` and `assignment`. The consumer group only shares partitions between nodes:
 * offsets live in PostgreSQL with the projections (the handler's `assigned` answers them),
 * nothing is committed to Kafka. Records this node appended (`local`) reach the handler of
 * their partition without a fetch.
 */
export const makeKafkaConsumer = (client: KafkaClient, local: LocalRecords, watch: BrokerWatch) => {
  const { settings } = client
  const { topic, partitions } = settings

  /**
   * The partitions the consumer group gave this node in its latest join; none while it is not a
   * member (starting, or its consumer stopped): readiness tells "owns nothing yet" from "owns
   * nothing because the others own everything".
   */
  let membership: ReadonlySet<number> | undefined

  const run = (handler: PartitionHandler): Effect.Effect<void, never, Scope.Scope> =>
    Effect.gen(function*() {
      const runPromise = yield* FiberSet.makeRuntimePromise<never>()
      const states: ReadonlyArray<PartitionState> = yield* Effect.forEach(range(partitions), () =>
        Semaphore.make(1).pipe(Effect.map((lock): PartitionState => ({ lock, assignedIn: undefined, next: 0, stopped: false }))))
      // Our count of group joins; a partition is ours in the latest one only.
      let generation = 0
      let current = new Set<number>()
      let consumer: Consumer | undefined
      /** Runs work started by a kafkajs event; a failure is logged, never an unhandled rejection. */
      const background = (effect: Effect.Effect<void>) =>
        void runPromise(effect.pipe(
          Effect.catchCause((cause) =>
            Cause.hasInterruptsOnly(cause) ? Effect.void : Effect.logError("KafkaLog: rebalance handling failed", cause)
          )
        )).catch(() => undefined)

      /**
       * Brings a partition in line with the latest assignment, under its lock (so never during
       * one of its batches): revoke it if it was assigned in an older generation, then, if it
       * is ours now, ask the handler where to resume, seek there and resume fetching it. Every
       * rebalance reassigns, since another node may have moved the partition on meanwhile.
       */
      const reconcile = (partition: number) => {
        const state = states[partition]!
        return state.lock.withPermits(1)(Effect.gen(function*() {
          if (state.assignedIn !== undefined && state.assignedIn !== generation) {
            state.assignedIn = undefined
            yield* handler.revoked(partition)
          }
          if (!current.has(partition) || state.assignedIn === generation || consumer === undefined) return
          const joined = generation
          state.stopped = false
          state.next = yield* handler.assigned(partition)
          state.assignedIn = joined
          consumer.seek({ topic, partition, offset: String(state.next) })
          consumer.resume([{ topic, partitions: [partition] }])
        }))
      }
      const reconcileAll = (touched: Iterable<number>) =>
        Effect.forEach(new Set(touched), reconcile, { concurrency: "unbounded", discard: true })

      /** A handler defect: revoke, pause, then assign again (reloading the handler's state). */
      const restart = (partition: number, attempt: number) =>
        Effect.gen(function*() {
          const state = states[partition]!
          state.assignedIn = undefined
          yield* handler.revoked(partition)
          const pause = pauseBackoff(attempt)
          yield* Effect.logError(`KafkaLog: partition ${partition} handler failed; restarting in ${pause} ms`)
          yield* Effect.sleep(pause)
          if (!current.has(partition) || consumer === undefined) return
          const joined = generation
          state.next = yield* handler.assigned(partition)
          state.assignedIn = joined
          consumer.seek({ topic, partition, offset: String(state.next) })
        })

      const failures = new Map<number, number>()

      /**
       * Hands a partition's next records to the handler (under its lock); false when the handler
       * failed, and the partition restarts from what the handler committed.
       */
      const deliver = (partition: number, entries: ReadonlyArray<LogEntry>) =>
        Effect.gen(function*() {
          const exit = yield* Effect.exit(handler.batch(partition, entries))
          if (Exit.isFailure(exit)) {
            yield* Effect.logError(`KafkaLog: partition ${partition} batch failed`, exit.cause)
            const attempt = failures.get(partition) ?? 0
            failures.set(partition, attempt + 1)
            yield* restart(partition, attempt)
            return false
          }
          failures.delete(partition)
          states[partition]!.next = entries[entries.length - 1]!.offset + 1
          return true
        })

      /** Records this node appended to a partition it consumes, folded without waiting for their fetch. */
      const takeLocal = (partition: number) => {
        const state = states[partition]!
        return state.lock.withPermits(1)(Effect.suspend(() => {
          if (state.assignedIn !== generation || state.stopped) return Effect.sync(() => local.forget(partition))
          const entries = local.take(partition, state.next)
          return entries.length === 0 ? Effect.void : Effect.asVoid(deliver(partition, entries))
        }))
      }
      const detach = local.attach({
        owns: (partition) => states[partition]!.assignedIn === generation && !states[partition]!.stopped,
        ready: (partition) => background(takeLocal(partition))
      })
      yield* Effect.addFinalizer(() => Effect.sync(detach))

      const eachBatch = (partition: number, messages: ReadonlyArray<KafkaMessage>, resolveOffset: (o: string) => void) => {
        const state = states[partition]!
        return state.lock.withPermits(1)(Effect.gen(function*() {
          // Fetched for an assignment that is gone or not answered yet: the seek that follows
          // the (re)assignment fetches these again.
          if (state.assignedIn !== generation || state.stopped) return
          const fresh = messages.filter((m) => Number(m.offset) >= state.next)
          const first = fresh[0]
          if (first === undefined) {
            const last = messages[messages.length - 1]
            if (last !== undefined) resolveOffset(last.offset)
            return
          }
          if (Number(first.offset) > state.next) {
            yield* Effect.logError(
              `KafkaLog: partition ${partition} has no records ${state.next}..${Number(first.offset) - 1} ` +
                "(deleted by retention?); continuing after them"
            )
          }
          const { entries, failure } = yield* decodeMessages(partition, fresh)
          if (entries.length > 0) {
            if (!(yield* deliver(partition, entries))) return
            resolveOffset(String(entries[entries.length - 1]!.offset))
          }
          if (Option.isSome(failure)) {
            // Never skip a record: stop the partition where it is, loudly.
            state.stopped = true
            consumer?.pause([{ topic, partitions: [partition] }])
            yield* Effect.logError(
              `KafkaLog: partition ${partition} STOPPED: ${failure.value.message}. ` +
                "No later record of this partition is processed until the record is repaired and the node restarted."
            )
            state.assignedIn = undefined
            yield* handler.revoked(partition)
          }
        }))
      }

      /** Leaves what was ours: after a consumer has left the group, or crashed out of it. */
      const revokeAll = Effect.suspend(() => {
        current = new Set()
        membership = undefined
        generation++
        return reconcileAll(range(partitions))
      })

      /**
       * One consumer, from its join to its crash: `crashed` completes when kafkajs gives up on it
       * (the broker went away, the coordinator moved). kafkajs would restart it itself, but only
       * after its retry backoff (up to ~10 s) and under a new member id while the old one still
       * holds up the group's rebalance; a new incarnation, once the cluster answers, removes that
       * one first.
       */
      const incarnation = (crashed: Deferred.Deferred<void>) =>
        Effect.gen(function*() {
          let memberId: string | undefined
          yield* Effect.addFinalizer(() => Effect.sync(() => memberId !== undefined && liveMembers.delete(memberId)))
          const c = yield* scopedConsumer(client, settings.groupId, revokeAll, { restart: false })
          consumer = c
          yield* removeStaleMembers(client, settings.groupId)
          yield* Effect.tryPromise({
            try: () => c.subscribe({ topics: [topic], fromBeginning: true }),
            catch: unavailable("subscribing")
          })
          // Emitted after each join and before the generation's first fetch: pause what we got
          // until `assigned` has answered and we have sought there (reconcile resumes it).
          c.on(c.events.GROUP_JOIN, (event) => {
            const mine = event.payload.memberAssignment[topic] ?? []
            const before = current
            generation++
            current = new Set(mine)
            membership = current
            memberId = event.payload.memberId
            liveMembers.add(memberId)
            if (mine.length > 0) c.pause([{ topic, partitions: mine }])
            background(reconcileAll([...before, ...mine]))
          })
          c.on(c.events.CRASH, (event) => {
            if (memberId !== undefined) liveMembers.delete(memberId)
            background(
              Effect.logWarning(`KafkaLog: the consumer stopped: ${describe(event.payload.error)}; starting another once the cluster answers`).pipe(
                Effect.andThen(revokeAll),
                Effect.ensuring(Deferred.succeed(crashed, undefined))
              )
            )
          })
          yield* Effect.tryPromise({
            try: () =>
              c.run({
                autoCommit: false,
                eachBatchAutoResolve: false,
                partitionsConsumedConcurrently: partitions,
                eachBatch: async ({ batch, resolveOffset, heartbeat }) => {
                  await runPromise(eachBatch(batch.partition, batch.messages, (offset) =>
                    resolveOffset(offset)))
                  await heartbeat().catch(() => undefined)
                }
              }),
            catch: unavailable("starting the consumer")
          })
        })

      /** Starts an incarnation in a scope of its own, retried until it runs. */
      const start = Effect.gen(function*() {
        const crashed = yield* Deferred.make<void>()
        const scope = yield* Scope.make()
        const exit = yield* Effect.exit(incarnation(crashed).pipe(Effect.provideService(Scope.Scope, scope)))
        if (Exit.isSuccess(exit)) return { crashed, scope }
        yield* Scope.close(scope, Exit.void)
        return yield* Effect.failCause(exit.cause)
      }).pipe(
        // The broker answered when the layer started; wait for it rather than give up consuming.
        Effect.tapError((e) => Effect.logWarning(`${e.message}; retrying`)),
        Effect.retry(Schedule.spaced("1 second")),
        Effect.orDie
      )

      let live = yield* start
      yield* Effect.addFinalizer(() => Scope.close(live.scope, Exit.void))
      yield* Effect.forkScoped(Effect.forever(Effect.gen(function*() {
        yield* Deferred.await(live.crashed)
        yield* Scope.close(live.scope, Exit.void)
        yield* watch.up
        live = yield* start
      })))
    })

  return { run, assignment: Effect.sync(() => Option.fromUndefinedOr(membership)) }
}
