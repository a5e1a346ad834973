import pg from "pg"
import type { Bootstrapped } from "../../../src/store/tenancy-repo.ts"
import { call, type TestServer } from "../../support/harness.ts"
import { hexId, seeder } from "../../support/seed.ts"

/** The service's configuration for report suites: loopback receivers allowed, quick polls. */
export const reportEnv: Record<string, string> = {
  WEBHOOK_ALLOWED_HOSTS: "127.0.0.1",
  WEBHOOK_RETRY_SCALE: "0.001",
  WEBHOOK_TIMEOUT: "1 second",
  WEBHOOK_POLL_INTERVAL: "20 millis",
  REPORT_POLL_INTERVAL: "50 millis",
  PUBLIC_BASE_URL: "https://signals.example.com/",
  CLUSTER_SECRET: "s3cret-shared-by-all-nodes-of-the-cluster"
}

export const keyOf = (org: Bootstrapped): string => org.license_key_environment === "live" ? org.api_key_live! : org.api_key_test

export const api = (server: TestServer, org: Bootstrapped, method: string, path: string, body?: unknown) =>
  call(server, method, `/api/v1${path}`, { key: keyOf(org), ...(body === undefined ? {} : { body }) })

/** Monday 00:00 UTC of the week `weeksBack` weeks before the current one (0: this week's). */
export const mondayUtc = (weeksBack: number): Date => {
  const now = new Date()
  const daysSinceMonday = (now.getUTCDay() + 6) % 7
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() - daysSinceMonday - 7 * weeksBack))
}

/** Usage as the engine would have recorded it: one session and its events, each `hours` after `start`. */
export const seedSpend = async (
  databaseUrl: string,
  org: Bootstrapped,
  userId: string,
  start: Date,
  events: ReadonlyArray<{ readonly hours: number; readonly model: string; readonly cost: number; readonly tokens: number }>
) => {
  const seed = seeder(databaseUrl)
  try {
    const environment = org.license_key_environment
    const session = await seed.session({ id: hexId("sess"), org_id: org.org_id, environment, user_id: userId, started_at: start.toISOString() })
    for (const e of events) {
      await seed.event({
        org_id: org.org_id,
        environment,
        session_id: session.id,
        user_id: userId,
        ts: new Date(start.getTime() + e.hours * 3_600_000).toISOString(),
        model: e.model,
        cost_usd: e.cost,
        tokens_in: e.tokens,
        tokens_out: 0
      })
    }
  } finally {
    await seed.close()
  }
}

/** Runs one statement on the database directly (to make a schedule due, as time passing would). */
export const sqlOn = async (databaseUrl: string, text: string, values: ReadonlyArray<unknown> = []) => {
  const client = new pg.Client({ connectionString: databaseUrl })
  await client.connect()
  try {
    return (await client.query(text, [...values])).rows
  } finally {
    await client.end()
  }
}

/** Makes a schedule due now: its next_due_at a minute in the past. */
export const makeDue = (databaseUrl: string, scheduleId: string) =>
  sqlOn(databaseUrl, "UPDATE report_schedules SET next_due_at = now() - interval '1 minute' WHERE id = $1", [scheduleId])
