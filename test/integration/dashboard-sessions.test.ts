import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { beforeAll, describe, expect, it } from "vitest"
import { DashboardSessions } from "../../src/store/dashboard-sessions-repo.ts"
import type { Bootstrapped } from "../../src/store/tenancy-repo.ts"
import { bootstrapOrg, freshDatabase, withStore } from "../support/harness.ts"

let databaseUrl: string
let org: Bootstrapped

beforeAll(async () => {
  databaseUrl = await freshDatabase()
  org = await bootstrapOrg(databaseUrl, "sessions", "team")
})

const withSessions = <A>(run: (sessions: DashboardSessions["Service"], sql: SqlClient.SqlClient) => Effect.Effect<A>) =>
  withStore(
    databaseUrl,
    Effect.gen(function*() {
      return yield* run(yield* DashboardSessions, yield* SqlClient.SqlClient)
    }).pipe(Effect.provide(DashboardSessions.layer))
  )

const create = () => withSessions((s) => s.create({ orgId: org.org_id, userId: org.user_id, ttlSeconds: 3600 }))
const find = (id: string) => withSessions((s) => s.find(id))

describe("dashboard sessions", () => {
  it("a new session is found by its id, for its org and user, with a CSRF token; the database keeps no id", async () => {
    const { id, session } = await create()
    expect(id).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(session).toMatchObject({ orgId: org.org_id, userId: org.user_id })
    expect(session.csrfToken).toMatch(/^[A-Za-z0-9_-]{43}$/)
    expect(session.expiresAt.getTime()).toBeGreaterThan(Date.now())
    expect(await find(id)).toEqual(session)
    const stored = await withSessions((_, sql) => sql`SELECT id_hash FROM dashboard_sessions`.pipe(Effect.orDie))
    expect(stored.map((r) => r.id_hash)).not.toContain(id)
  })

  it("two sessions have different ids and tokens", async () => {
    const [a, b] = [await create(), await create()]
    expect(a.id).not.toBe(b.id)
    expect(a.session.csrfToken).not.toBe(b.session.csrfToken)
  })

  it("an unknown id finds nothing", async () => {
    expect(await find("no-such-session")).toBeUndefined()
  })

  it("sign-out ends it: not found any more, and a second end is false", async () => {
    const { id } = await create()
    expect(await withSessions((s) => s.end(id))).toBe(true)
    expect(await find(id)).toBeUndefined()
    expect(await withSessions((s) => s.end(id))).toBe(false)
  })

  it("an expired session is not found", async () => {
    const { id } = await create()
    await withSessions((_, sql) => sql`UPDATE dashboard_sessions SET expires_at = now() - interval '1 second'`.pipe(Effect.orDie))
    expect(await find(id)).toBeUndefined()
  })

  it("a deactivated user's session is not found", async () => {
    const { id } = await create()
    expect(await find(id)).toBeDefined()
    await withSessions((_, sql) => sql`UPDATE users SET deactivated_at = now() WHERE id = ${org.user_id}`.pipe(Effect.orDie))
    expect(await find(id)).toBeUndefined()
  })
})
