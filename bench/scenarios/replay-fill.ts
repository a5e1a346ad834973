/**
 * The replay scenario's log: `count` valid signal records of the tenant's users, written
 * straight into the PostgreSQL log or produced to a new Kafka topic, partitioned as the service
 * partitions them (murmur2 of the user, mod the partitions).
 */
import { Effect } from "effect"
import { Kafka, logLevel } from "kafkajs"
import { patchKafkajs } from "../../src/log/kafkajs-patches.ts"
import { partitionForKey } from "../../src/log/murmur2.ts"
import { withDb } from "../database.ts"
import { options } from "../options.ts"
import type { Tenant } from "../seed.ts"

/** A log of `count` valid signal records of `users` users, written straight into signal_log. */
export const fillPgLog = async (url: string, tenant: Tenant, count: number) => {
  const parts = tenant.userIds.map((u) => partitionForKey(u, options.partitions))
  await withDb(url, (sql) =>
    Effect.gen(function*() {
      yield* sql`
        INSERT INTO signal_log (partition, "offset", key, record)
        SELECT g.partition, row_number() OVER (PARTITION BY g.partition ORDER BY g.i) - 1, g.user_id, jsonb_build_object(
          'v', 1, 'kind', 'signal', 'org_id', ${tenant.orgId}::text, 'environment', 'test', 'user_id', g.user_id,
          'ts', to_char((timestamptz '2026-01-01 00:00:00+00' + g.i * interval '1 millisecond') AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"'),
          'signal_id', 'sig_' || lpad(to_hex(g.i), 32, '0'),
          'type', CASE WHEN g.i % 10 = 0 THEN 'user-prompt' ELSE 'post-tool' END,
          'adapter', 'claude-code', 'client_session_id', 'replay-' || g.u,
          'metadata', jsonb_build_object('model', 'claude-sonnet-4', 'tokens_in', 1000, 'tokens_out', 100,
            'latency_ms', 400, 'project_id', 'proj_1', 'tool', 'Edit'),
          'session_timeout_s', 1800,
          'cost', jsonb_build_object('usd', 0.0045, 'estimated', true, 'model_known', true))
        FROM (
          SELECT i, (i % ${tenant.userIds.length}) AS u, users.user_id, users.partition
          FROM generate_series(0, ${count - 1}::int8) AS i
          JOIN unnest(${tenant.userIds}::text[], ${parts}::int4[]) WITH ORDINALITY AS users(user_id, partition, n)
            ON users.n = (i % ${tenant.userIds.length}) + 1
        ) AS g`
      yield* sql`
        INSERT INTO signal_log_heads (partition, next_offset)
        SELECT p, coalesce((SELECT count(*) FROM signal_log WHERE partition = p), 0)
        FROM generate_series(0, ${options.partitions - 1}::int4) AS p
        ON CONFLICT (partition) DO UPDATE SET next_offset = EXCLUDED.next_offset`
    }))
}

/** The same records produced to a new topic (kafkajs, batches of 5,000). */
export const fillKafkaLog = async (brokers: string, topic: string, tenant: Tenant, count: number) => {
  patchKafkajs()
  const client = new Kafka({ clientId: "signal-engine-bench", brokers: [brokers], logLevel: logLevel.ERROR })
  const kafkaAdmin = client.admin()
  await kafkaAdmin.connect()
  // The settings the service creates its topic with (it warns about a topic that deletes records).
  const configEntries = [{ name: "retention.ms", value: "-1" }, { name: "retention.bytes", value: "-1" }]
  await kafkaAdmin.createTopics({ waitForLeaders: true, topics: [{ topic, numPartitions: options.partitions, replicationFactor: 1, configEntries }] })
  await kafkaAdmin.disconnect()
  const producer = client.producer({ allowAutoTopicCreation: false })
  await producer.connect()
  const base = Date.parse("2026-01-01T00:00:00Z")
  const parts = tenant.userIds.map((u) => partitionForKey(u, options.partitions))
  for (let start = 0; start < count; start += 5_000) {
    const messages = []
    for (let i = start; i < Math.min(count, start + 5_000); i++) {
      const u = i % tenant.userIds.length
      const user = tenant.userIds[u]!
      messages.push({
        key: user,
        partition: parts[u]!,
        value: JSON.stringify({
          v: 1,
          kind: "signal",
          org_id: tenant.orgId,
          environment: "test",
          user_id: user,
          ts: new Date(base + i).toISOString(),
          signal_id: `sig_${i.toString(16).padStart(32, "0")}`,
          type: i % 10 === 0 ? "user-prompt" : "post-tool",
          adapter: "claude-code",
          client_session_id: `replay-${u}`,
          metadata: { model: "claude-sonnet-4", tokens_in: 1000, tokens_out: 100, latency_ms: 400, project_id: "proj_1", tool: "Edit" },
          session_timeout_s: 1800,
          cost: { usd: 0.0045, estimated: true, model_known: true }
        })
      })
    }
    await producer.send({ topic, acks: 1, messages })
  }
  await producer.disconnect()
}
