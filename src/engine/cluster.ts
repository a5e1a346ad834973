import { Cache, Config, Context, Duration, Effect, Layer, Option, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes, timingSafeEqual } from "node:crypto"

export interface Owner {
  readonly nodeId: string
  readonly url: string
}

/**
 * This node's place in a cluster. Each node records the partitions it owns (and the URL it
 * can be reached at) in PostgreSQL; a node that receives a signal for a partition another node
 * owns forwards it there, so the owner's actor answers with a verdict. Forwarding needs
 * CLUSTER_SECRET (the same on every node) and NODE_URL (how the others reach this node);
 * without a secret each node answers only for its own partitions and others get `pending`.
 */
export class Cluster extends Context.Service<Cluster, {
  readonly nodeId: string
  /** Whether forwarding is configured. */
  readonly enabled: boolean
  readonly claim: (log: string, partition: number) => Effect.Effect<void>
  readonly release: (log: string, partition: number) => Effect.Effect<void>
  /** The owner of a partition, as recorded (cached briefly). */
  readonly ownerOf: (log: string, partition: number) => Effect.Effect<Option.Option<Owner>>
  /** Constant-time check of a forwarded request's secret. */
  readonly authentic: (presented: string | undefined) => boolean
  readonly secret: Option.Option<Redacted.Redacted<string>>
}>()("signal-engine/engine/Cluster") {
  static readonly layer = Layer.effect(
    Cluster,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const secret = yield* Config.option(Config.Redacted("CLUSTER_SECRET"))
      const port = yield* Config.Port("PORT").pipe(Config.withDefault(8080))
      const url = yield* Config.String("NODE_URL").pipe(Config.withDefault(`http://127.0.0.1:${port}`))
      const nodeId = `node_${randomBytes(8).toString("hex")}`

      const claim = (log: string, partition: number) =>
        sql`INSERT INTO partition_owners (log, partition, node_id, url, claimed_at)
            VALUES (${log}, ${partition}, ${nodeId}, ${url}, now())
            ON CONFLICT (log, partition) DO UPDATE SET node_id = excluded.node_id, url = excluded.url, claimed_at = now()`
          .pipe(Effect.asVoid, Effect.orDie)

      const release = (log: string, partition: number) =>
        sql`DELETE FROM partition_owners WHERE log = ${log} AND partition = ${partition} AND node_id = ${nodeId}`
          .pipe(Effect.asVoid, Effect.orDie)

      const owners = yield* Cache.make({
        lookup: (key: string) => {
          const [log, partition] = [key.slice(0, key.lastIndexOf("/")), Number(key.slice(key.lastIndexOf("/") + 1))]
          return sql<{ readonly node_id: string; readonly url: string }>`
            SELECT node_id, url FROM partition_owners WHERE log = ${log} AND partition = ${partition}`.pipe(
            Effect.map((rows) => Option.map(Option.fromNullishOr(rows[0]), (r) => ({ nodeId: r.node_id, url: r.url }))),
            Effect.orDie
          )
        },
        capacity: 10_000,
        timeToLive: Duration.seconds(1)
      })

      const expected = Option.map(secret, (s) => Buffer.from(Redacted.value(s)))
      const authentic = (presented: string | undefined) => {
        if (Option.isNone(expected) || presented === undefined) return false
        const given = Buffer.from(presented)
        return given.length === expected.value.length && timingSafeEqual(given, expected.value)
      }

      return Cluster.of({
        nodeId,
        enabled: Option.isSome(secret),
        claim,
        release,
        ownerOf: (log, partition) => Cache.get(owners, `${log}/${partition}`),
        authentic,
        secret
      })
    })
  )
}
