import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Bootstrapped } from "../../src/store/tenancy-repo.ts"
import { bootstrapOrg, call, startServer, type TestServer, withStore } from "../support/harness.ts"
import { logVariants } from "../support/log-variants.ts"
import { waitFor } from "../support/wait.ts"

/** What /readyz says of the node's actors. */
const actorsOf = async (server: TestServer): Promise<{ in_memory: number; session_timers: number }> => (await call(server, "GET", "/readyz")).body.checks.actors

describe.each(logVariants())("idle actors over %s", (_name, logEnv) => {
  let server: TestServer
  let org: Bootstrapped

  beforeAll(async () => {
    server = await startServer({ env: { ...logEnv(), ACTOR_IDLE_TIMEOUT: "1 second" } })
    org = await bootstrapOrg(server.databaseUrl, "actors", "team")
    await withStore(
      server.databaseUrl,
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE orgs SET session_timeout_s = 8 WHERE id = ${org.org_id}`
      })
    )
  })
  afterAll(() => server?.stop())

  const send = (tokensIn: number) =>
    call(server, "POST", "/engine/v1/signals", {
      key: org.license_key,
      body: { type: "post-tool", adapter: "cursor", session_id: "c-1", metadata: { model: "gpt-4o", tokens_in: tokensIn, tokens_out: 10 } }
    })

  it("leave memory when idle, come back from their snapshot on the next signal, and their sessions still time out", { timeout: 60_000 }, async () => {
    expect(await actorsOf(server)).toEqual({ in_memory: 0, session_timers: 0 })

    const first = await send(100)
    expect(first.body).toMatchObject({ ok: true })
    await waitFor(() => actorsOf(server), (a) => a.in_memory === 1 && a.session_timers === 1, { what: "the user's actor and timer" })

    // Idle past ACTOR_IDLE_TIMEOUT: the actor goes, its open session's timer stays.
    await waitFor(() => actorsOf(server), (a) => a.in_memory === 0, { what: "the idle actor to be evicted" })
    expect(await actorsOf(server)).toEqual({ in_memory: 0, session_timers: 1 })

    // The next signal reloads the user's state: the same session goes on, its counts carried over.
    const second = await send(200)
    expect(second.body).toMatchObject({ ok: true })
    await waitFor(() => actorsOf(server), (a) => a.in_memory === 1 && a.session_timers === 1, { what: "the actor to be back" })
    const sessions = (await waitFor(
      () => call(server, "GET", "/engine/v1/sessions", { key: org.license_key }),
      (r) => r.body.sessions?.[0]?.signals === 2,
      { what: "the second signal in the session" }
    )).body.sessions
    expect(sessions).toHaveLength(1)
    expect(sessions[0]).toMatchObject({ signals: 2, tokens_in: 300, tokens_out: 20 })

    // Evicted again, the user's session still ends on its timeout, and nothing is left running.
    const ended = await waitFor(
      () => call(server, "GET", `/engine/v1/sessions/${sessions[0].id}`, { key: org.license_key }),
      (r) => r.body.session?.ended_at != null,
      { timeoutMs: 30_000, what: "the session to time out" }
    )
    expect(ended.body.session).toMatchObject({ signals: 2 })
    await waitFor(() => actorsOf(server), (a) => a.in_memory === 0 && a.session_timers === 0, { what: "the node to hold nothing" })
  })
})
