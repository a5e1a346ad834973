import { Deferred, Effect, Exit, Schedule, Scope } from "effect"
import type { Consumer } from "kafkajs"
import type { BrokerWatch } from "./broker-watch.ts"
import type { GroupAssignment } from "./kafka-assignment.ts"
import type { PartitionBatches } from "./kafka-batches.ts"
import { describe, type KafkaClient, scopedConsumer, unavailable } from "./kafka-client.ts"
import { liveMembers, removeStaleMembers } from "./kafka-membership.ts"

/** What an incarnation is given by `run`. */
export interface IncarnationContext {
  readonly client: KafkaClient
  readonly watch: BrokerWatch
  readonly assignment: GroupAssignment
  readonly batches: PartitionBatches
  /** Runs a batch for kafkajs, which awaits it. */
  readonly runPromise: (effect: Effect.Effect<void>) => Promise<void>
  /** Runs work started by a kafkajs event; a failure is logged, never an unhandled rejection. */
  readonly background: (effect: Effect.Effect<void>) => void
}

/** This incarnation's member id in the group, once it has joined. */
interface Member {
  id: string | undefined
}

/**
 * Follows the group's events on `consumer`. A join (emitted before the generation's first fetch)
 * pauses what we got until `assigned` has answered and we have sought there (reconcile resumes
 * it). A crash leaves what was ours and completes `crashed`.
 */
const followGroup = (ctx: IncarnationContext, consumer: Consumer, member: Member, crashed: Deferred.Deferred<void>) => {
  const { assignment, background } = ctx
  const { topic } = ctx.client.settings
  consumer.on(consumer.events.GROUP_JOIN, (event) => {
    const mine = event.payload.memberAssignment[topic] ?? []
    const touched = assignment.joined(mine)
    member.id = event.payload.memberId
    liveMembers.add(member.id)
    if (mine.length > 0) consumer.pause([{ topic, partitions: mine }])
    background(assignment.reconcile(touched))
  })
  consumer.on(consumer.events.CRASH, (event) => {
    if (member.id !== undefined) liveMembers.delete(member.id)
    background(
      Effect.logWarning(`KafkaLog: the consumer stopped: ${describe(event.payload.error)}; starting another once the cluster answers`).pipe(
        Effect.andThen(assignment.leave),
        Effect.ensuring(Deferred.succeed(crashed, undefined))
      )
    )
  })
}

/** Starts fetching: every partition's batches to `batches`, nothing committed to Kafka. */
const consume = (ctx: IncarnationContext, consumer: Consumer) =>
  Effect.tryPromise({
    try: () =>
      consumer.run({
        autoCommit: false,
        eachBatchAutoResolve: false,
        partitionsConsumedConcurrently: ctx.client.settings.partitions,
        eachBatch: async ({ batch, resolveOffset, heartbeat }) => {
          await ctx.runPromise(ctx.batches.fetched(batch.partition, batch.messages, (offset) => resolveOffset(offset)))
          await heartbeat().catch(() => undefined)
        }
      }),
    catch: unavailable("starting the consumer")
  })

/**
 * One consumer, from its join to its crash: `crashed` completes when kafkajs gives up on it
 * (the broker went away, the coordinator moved). kafkajs would restart it itself, but only
 * after its retry backoff (up to ~10 s) and under a new member id while the old one still
 * holds up the group's rebalance; a new incarnation, once the cluster answers, removes that
 * one first.
 */
const incarnation = (ctx: IncarnationContext, crashed: Deferred.Deferred<void>) =>
  Effect.gen(function*() {
    const { client, assignment } = ctx
    const { topic, groupId } = client.settings
    const member: Member = { id: undefined }
    yield* Effect.addFinalizer(() => Effect.sync(() => member.id !== undefined && liveMembers.delete(member.id)))
    const consumer = yield* scopedConsumer(client, groupId, assignment.leave, { restart: false })
    assignment.attach(consumer)
    yield* removeStaleMembers(client, groupId)
    yield* Effect.tryPromise({
      try: () => consumer.subscribe({ topics: [topic], fromBeginning: true }),
      catch: unavailable("subscribing")
    })
    followGroup(ctx, consumer, member, crashed)
    yield* consume(ctx, consumer)
  })

/** Starts an incarnation in a scope of its own, retried until it runs. */
const start = (ctx: IncarnationContext) =>
  Effect.gen(function*() {
    const crashed = yield* Deferred.make<void>()
    const scope = yield* Scope.make()
    const exit = yield* Effect.exit(incarnation(ctx, crashed).pipe(Effect.provideService(Scope.Scope, scope)))
    if (Exit.isSuccess(exit)) return { crashed, scope }
    yield* Scope.close(scope, Exit.void)
    return yield* Effect.failCause(exit.cause)
  }).pipe(
    // The broker answered when the layer started; wait for it rather than give up consuming.
    Effect.tapError((e) => Effect.logWarning(`${e.message}; retrying`)),
    Effect.retry(Schedule.spaced("1 second")),
    Effect.orDie
  )

/**
 * Keeps one incarnation of the group consumer running while the scope is open: the first starts
 * now; after each crash the next starts once the broker watch says the cluster is up.
 */
export const runIncarnations = (ctx: IncarnationContext): Effect.Effect<void, never, Scope.Scope> =>
  Effect.gen(function*() {
    let live = yield* start(ctx)
    yield* Effect.addFinalizer(() => Scope.close(live.scope, Exit.void))
    yield* Effect.forkScoped(Effect.forever(Effect.gen(function*() {
      yield* Deferred.await(live.crashed)
      yield* Scope.close(live.scope, Exit.void)
      yield* ctx.watch.up
      live = yield* start(ctx)
    })))
  })
