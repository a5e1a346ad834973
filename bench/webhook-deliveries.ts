/**
 * How many webhook deliveries per second one node sustains to a local receiver (not a test).
 * Starts the real service (HTTP, engine, dispatcher) on a fresh database (on ADMIN_DATABASE_URL,
 * a PostgreSQL URL whose user may create databases, else on a throwaway embedded cluster), registers W webhooks on a local node:http receiver, enqueues N events straight into the
 * outbox (so the ingestion path is not what is measured), and times until all are delivered.
 *
 *   [ADMIN_DATABASE_URL=postgres://…] node bench/webhook-deliveries.ts [events=5000] [webhooks=4] [workers=4]
 */
import { ConfigProvider, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import { mkdtempSync } from "node:fs"
import { createServer } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { appLayer } from "../src/main.ts"
import { databaseFromUrl } from "../src/store/database.ts"
import { startEmbeddedPostgres } from "../src/store/embedded-postgres.ts"
import { Tenancy } from "../src/store/tenancy-repo.ts"
import { Webhooks } from "../src/store/webhooks-repo.ts"

const events = Number(process.argv[2] ?? 5000)
const webhookCount = Number(process.argv[3] ?? 4)
const workers = process.argv[4] ?? "4"
const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as AddressInfo).port
      s.close(() => resolve(port))
    })
  })
const embedded = process.env.ADMIN_DATABASE_URL
  ? undefined
  : await startEmbeddedPostgres({ dataDir: join(mkdtempSync(join(tmpdir(), "wh-bench-")), "pg"), port: await freePort(), ephemeral: true })
const admin = new URL(process.env.ADMIN_DATABASE_URL ?? embedded!.url)

let received = 0
const receiver = createServer((req, res) => {
  req.resume()
  req.on("end", () => {
    received++
    res.writeHead(204).end()
  })
})
await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r))
const url = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/hook`

const name = `bench_wh_${randomBytes(4).toString("hex")}`
await Effect.runPromise(
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql`CREATE DATABASE ${sql(name)}`
  }).pipe(Effect.provide(databaseFromUrl(admin.toString())), Effect.scoped)
)
const dbUrl = new URL(admin)
dbUrl.pathname = `/${name}`

const env = {
  HOST: "127.0.0.1",
  PORT: String(await freePort()),
  WEBHOOK_WORKERS: workers,
  DEMO_BOOTSTRAP: "false",
  WEBHOOK_ALLOWED_HOSTS: "127.0.0.1",
  WEBHOOK_POLL_INTERVAL: "20 millis"
}
const program = Effect.gen(function*() {
  const tenancy = yield* Tenancy
  const webhooks = yield* Webhooks
  const sql = yield* SqlClient.SqlClient
  const org = yield* tenancy.bootstrap({ org: "bench", plan: "team", apiKeyPrefix: "sek" })
  const tenant = { orgId: org.org_id, environment: "live" as const }
  for (let i = 0; i < webhookCount; i++) {
    yield* webhooks.create(tenant, { url: `${url}?w=${i}`, events: ["session.started"], secret: "x".repeat(40) })
  }
  const rows = Array.from({ length: events }, (_, i) => {
    const id = `wev_bench${String(i).padStart(27, "0")}`
    return {
      id,
      org_id: org.org_id,
      environment: "live",
      type: "session.started",
      payload: JSON.stringify({ id, type: "session.started", org_id: org.org_id, ts: new Date().toISOString(), data: { i } })
    }
  })
  const started = performance.now()
  yield* sql`
    WITH e AS (INSERT INTO webhook_events (id, org_id, environment, type, payload)
      SELECT id, org_id, environment, type, payload::json FROM jsonb_to_recordset(${JSON.stringify(rows)}::jsonb)
        AS r(id text, org_id text, environment text, type text, payload text) RETURNING id, org_id, environment, type)
    INSERT INTO webhook_deliveries (webhook_id, event_id, next_attempt_at)
    SELECT w.id, e.id, now() FROM e JOIN webhooks w ON w.org_id = e.org_id AND e.type = ANY (w.events)`
  const total = events * webhookCount
  while (received < total) yield* Effect.sleep("50 millis")
  const seconds = (performance.now() - started) / 1000
  console.log(`${total} deliveries (${events} events × ${webhookCount} webhooks) in ${seconds.toFixed(2)} s: ${Math.round(total / seconds)} deliveries/s`)
})

await Effect.runPromise(
  program.pipe(
    Effect.provide(appLayer(databaseFromUrl(dbUrl.toString()))),
    Effect.provide(Layer.mergeAll(ConfigProvider.layer(ConfigProvider.fromEnv({ env })))),
    Effect.scoped
  )
)
receiver.close()
await embedded?.stop()
process.exit(0)
