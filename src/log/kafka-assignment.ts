import { Effect, Semaphore } from "effect"
import type { Consumer } from "kafkajs"
import { range } from "./partitions.ts"
import type { PartitionHandler } from "./signal-log.ts"

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
 * This node's side of the consumer group's assignment, and the one place where its partitions
 * change state. A partition is *consumed* here when the handler's `assigned` was answered for the
 * latest join and no undecodable record stopped it; only then do its records go to the handler.
 * Its batches and every change of its state run under its lock, so never beside each other.
 */
export interface GroupAssignment {
  /** The consumer of the current incarnation: (re)assigned partitions are sought and resumed on it. */
  readonly attach: (consumer: Consumer) => void
  /** Runs `effect` under the partition's lock. */
  readonly locked: <A, E>(partition: number, effect: Effect.Effect<A, E>) => Effect.Effect<A, E>
  /** Whether the partition's records go to the handler now. */
  readonly consuming: (partition: number) => boolean
  /** The partition's next offset: the first one the handler has not taken. */
  readonly next: (partition: number) => number
  /** The handler took the partition's records before `next`. */
  readonly advance: (partition: number, next: number) => void
  /**
   * A join gave this node `mine`: a new generation, published at once. Answers the partitions to
   * `reconcile`: those of the previous join as well as these.
   */
  readonly joined: (mine: ReadonlyArray<number>) => ReadonlyArray<number>
  /** Brings each partition in line with the latest join: revoked if older, assigned again if ours. */
  readonly reconcile: (touched: Iterable<number>) => Effect.Effect<void>
  /** Leaves what was ours: after a consumer has left the group, or crashed out of it. */
  readonly leave: Effect.Effect<void>
  /**
   * The handler failed, after `attempt` failures in a row: revoke, pause (longer each time), then
   * assign again, reloading the handler's state.
   */
  readonly restart: (partition: number, attempt: number) => Effect.Effect<void>
  /** A record of the partition does not decode: stop consuming it, loudly, and revoke it. */
  readonly stop: (partition: number, reason: string) => Effect.Effect<void>
}

/**
 * The assignment of one `run`. `publish` is told the partitions of the latest join, or none while
 * this node is not a member (readiness tells "owns nothing yet" from "the others own everything").
 */
export const makeGroupAssignment = (options: {
  readonly topic: string
  readonly partitions: number
  readonly handler: PartitionHandler
  readonly publish: (membership: ReadonlySet<number> | undefined) => void
}): Effect.Effect<GroupAssignment> =>
  Effect.gen(function*() {
    const { topic, handler, publish } = options
    const states: ReadonlyArray<PartitionState> = yield* Effect.forEach(range(options.partitions), () =>
      Semaphore.make(1).pipe(Effect.map((lock): PartitionState => ({ lock, assignedIn: undefined, next: 0, stopped: false }))))
    // Our count of group joins; a partition is ours in the latest one only.
    let generation = 0
    let current = new Set<number>()
    let consumer: Consumer | undefined

    /**
     * Brings a partition in line with the latest assignment, under its lock (so never during
     * one of its batches): revoke it if it was assigned in an older generation, then, if it
     * is ours now, ask the handler where to resume, seek there and resume fetching it. Every
     * rebalance reassigns, since another node may have moved the partition on meanwhile.
     */
    const reconcileOne = (partition: number) => {
      const state = states[partition]!
      return state.lock.withPermits(1)(Effect.gen(function*() {
        if (state.assignedIn !== undefined && state.assignedIn !== generation) {
          state.assignedIn = undefined
          yield* handler.revoked(partition)
        }
        if (!current.has(partition) || state.assignedIn === generation || consumer === undefined) {
          return
        }
        const joined = generation
        state.stopped = false
        state.next = yield* handler.assigned(partition)
        state.assignedIn = joined
        consumer.seek({ topic, partition, offset: String(state.next) })
        consumer.resume([{ topic, partitions: [partition] }])
      }))
    }
    const reconcile = (touched: Iterable<number>) =>
      Effect.forEach(new Set(touched), reconcileOne, { concurrency: "unbounded", discard: true })

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

    const stop = (partition: number, reason: string) =>
      Effect.gen(function*() {
        const state = states[partition]!
        // Never skip a record: stop the partition where it is.
        state.stopped = true
        consumer?.pause([{ topic, partitions: [partition] }])
        yield* Effect.logError(
          `KafkaLog: partition ${partition} STOPPED: ${reason}. ` +
            "No later record of this partition is processed until the record is repaired and the node restarted."
        )
        state.assignedIn = undefined
        yield* handler.revoked(partition)
      })

    return {
      attach: (c) => void (consumer = c),
      locked: (partition, effect) => states[partition]!.lock.withPermits(1)(effect),
      consuming: (partition) => states[partition]!.assignedIn === generation && !states[partition]!.stopped,
      next: (partition) => states[partition]!.next,
      advance: (partition, next) => void (states[partition]!.next = next),
      joined: (mine) => {
        const before = current
        generation++
        current = new Set(mine)
        publish(current)
        return [...before, ...mine]
      },
      reconcile,
      leave: Effect.suspend(() => {
        current = new Set()
        publish(undefined)
        generation++
        return reconcile(range(options.partitions))
      }),
      restart,
      stop
    }
  })
