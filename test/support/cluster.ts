import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { expect } from "vitest"
import { call, type TestServer, withStore } from "./harness.ts"
import { waitFor } from "./wait.ts"

/** Which node owns which partition, as the nodes recorded it. */
export const owners = (databaseUrl: string) =>
  withStore(
    databaseUrl,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql<{ readonly partition: number; readonly node_id: string; readonly url: string }>`SELECT partition, node_id, url FROM partition_owners`
    })
  )

/**
 * Waits until the nodes have shared the partitions out (both logs: Kafka's group splits them,
 * PgLog's nodes each take a fair share): every partition recorded, `nodes` distinct owners.
 */
export const sharedOwners = (databaseUrl: string, partitions: number, nodes = 2) =>
  waitFor(
    () => owners(databaseUrl),
    (rows) => rows.length === partitions && new Set(rows.map((r) => r.node_id)).size === nodes,
    { timeoutMs: 30_000, what: `the ${partitions} partitions to be shared by ${nodes} nodes` }
  )

/** `n` new users of the org, each with a license key: their ids and keys. */
export const usersWithKeys = async (server: TestServer, org: { readonly api_key_live: string | null }, n: number, domain = "cluster.test") =>
  Promise.all(Array.from({ length: n }, async (_, i) => {
    const user = await call(server, "POST", "/api/v1/users", { key: org.api_key_live!, body: { email: `n${i}@${domain}`, name: `N${i}` } })
    const key = await call(server, "POST", "/api/v1/license-keys", { key: org.api_key_live!, body: { user_id: user.body.id } })
    return { userId: user.body.id as string, keyId: key.body.id as string, key: key.body.key as string }
  }))

/**
 * Sends a signal of every key's user to every node, at once, and expects each to be answered
 * with its verdict (not `pending`): whichever node gets it, the owner of the partition decides.
 */
export const expectVerdictsThroughEveryNode = async (nodes: ReadonlyArray<TestServer>, keys: ReadonlyArray<string>, sessionId = "c") => {
  const answers = await Promise.all(
    keys.flatMap((key) =>
      nodes.map((node) => call(node, "POST", "/engine/v1/signals", { key, body: { type: "post-tool", adapter: "claude-code", session_id: sessionId } }))
    )
  )
  for (const answer of answers) {
    expect(answer.status).toBe(200)
    expect(answer.body.action).toBeUndefined()
    expect(answer.body.session_id).toMatch(/^sess_/)
  }
}
