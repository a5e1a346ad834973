import { describe, expect, it } from "vitest"
import { partitionForKey } from "../../src/log/murmur2.ts"
import { expectVerdictsThroughEveryNode, owners, sharedOwners } from "../support/cluster.ts"
import { bootstrapOrg, call, freshDatabase, startServer, type TestServer } from "../support/harness.ts"
import { logVariants } from "../support/log-variants.ts"
import { waitFor } from "../support/wait.ts"

const licenseKeys = async (server: TestServer, org: { readonly api_key_live: string | null }, n: number) =>
  Promise.all(Array.from({ length: n }, async (_, i) => {
    const user = await call(server, "POST", "/api/v1/users", { key: org.api_key_live!, body: { email: `n${i}@cluster.test`, name: `N${i}` } })
    return (await call(server, "POST", "/api/v1/license-keys", { key: org.api_key_live!, body: { user_id: user.body.id } })).body.key as string
  }))

describe.each(logVariants())("two nodes over %s", (_name, logEnv) => {
  it("a signal sent to any node gets its verdict from the owner of its partition (the proxy path)", { timeout: 90_000 }, async () => {
    const databaseUrl = await freshDatabase()
    const env = { ...logEnv(), CLUSTER_SECRET: "s3cret-shared-by-all-nodes-of-the-cluster", INGEST_WAIT: "5 seconds" }
    const nodeA = await startServer({ databaseUrl, env })
    await waitFor(() => owners(databaseUrl), (rows) => rows.length === 4, { what: "node A to own the partitions" })
    const nodeB = await startServer({ databaseUrl, env })
    try {
      // Both logs split the partitions between A and B: some users are A's, some B's.
      const settled = await sharedOwners(databaseUrl, 4)
      expect(settled).toHaveLength(4)
      const org = await bootstrapOrg(databaseUrl, "cluster", "team")
      const keys = await licenseKeys(nodeA, org, 8)
      await expectVerdictsThroughEveryNode([nodeA, nodeB], keys)
    } finally {
      await nodeB.stop()
      await nodeA.stop()
    }
  })
})

describe("the internal verdict route", () => {
  it("refuses a wrong or missing cluster secret, and every caller when no secret is configured", async () => {
    const withSecret = await startServer({ env: { CLUSTER_SECRET: "right-secret-right-secret-right-secret" } })
    const without = await startServer()
    try {
      for (const headers of [{}, { "x-cluster-secret": "wrong" }, { "x-cluster-secret": "right-secret-right-secret-right-secreT" }]) {
        const res = await fetch(`${withSecret.baseUrl}/internal/v1/verdicts/sig_x`, { headers })
        expect(res.status).toBe(401)
        const body: any = await res.json()
        expect(body.code).toBe("invalid_cluster_secret")
      }
      const ok = await fetch(`${withSecret.baseUrl}/internal/v1/verdicts/sig_x?wait_ms=10`, {
        headers: { "x-cluster-secret": "right-secret-right-secret-right-secret" }
      })
      expect(ok.status).toBe(204)
      const refused = await fetch(`${without.baseUrl}/internal/v1/verdicts/sig_x`, { headers: { "x-cluster-secret": "" } })
      expect(refused.status).toBe(401)
    } finally {
      await withSecret.stop()
      await without.stop()
    }
  })

  it("without a cluster secret a node that does not own the partition answers pending, and the signal is still kept", async () => {
    const databaseUrl = await freshDatabase()
    const env = { LOG_PARTITIONS: "4", INGEST_WAIT: "300 millis" }
    const nodeA = await startServer({ databaseUrl, env })
    await waitFor(() => owners(databaseUrl), (rows) => rows.length === 4, { what: "node A to own the partitions" })
    const nodeB = await startServer({ databaseUrl, env })
    try {
      const settled = await sharedOwners(databaseUrl, 4)
      const org = await bootstrapOrg(databaseUrl, "solo", "team")
      // The signal goes to the node that does not own the user's partition.
      const owner = settled.find((r) => r.partition === partitionForKey(org.user_id, 4))!
      const [owning, other] = owner.url.endsWith(`:${nodeA.port}`) ? [nodeA, nodeB] : [nodeB, nodeA]
      const res = await call(other, "POST", "/engine/v1/signals", { key: org.license_key, body: { type: "stop", adapter: "a", session_id: "s" } })
      expect(res.body).toMatchObject({ ok: true, action: "pending" })
      await waitFor(
        () => call(owning, "GET", "/api/v1/events", { key: org.api_key_live! }),
        (r) => r.body.data.some((e: { signal_id: string }) => e.signal_id === res.body.signal_id),
        { what: "the pending signal to be projected" }
      )
    } finally {
      await nodeB.stop()
      await nodeA.stop()
    }
  })
})
