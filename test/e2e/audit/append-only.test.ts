import { Effect, Exit } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Bootstrapped } from "../../../src/store/tenancy-repo.ts"
import { bootstrapOrg, call, startServer, type TestServer, withStore } from "../../support/harness.ts"
import { waitFor } from "../../support/wait.ts"

let server: TestServer
let org: Bootstrapped

/** Runs one statement as any client of the database could, and says how it ended. */
const run = (statement: string) =>
  withStore(
    server.databaseUrl,
    Effect.exit(Effect.flatMap(Effect.service(SqlClient.SqlClient), (sql) => sql.unsafe(statement)))
  )

const refusal = async (statement: string) => {
  const exit = await run(statement)
  expect(Exit.isFailure(exit), `${statement} was allowed`).toBe(true)
  return String(Exit.isFailure(exit) ? exit.cause : "")
}

const entries = async (query = "") => (await call(server, "GET", `/api/v1/audit-log?limit=100${query}`, { key: org.api_key_live! })).body.data as Array<any>

/** An entry as a change long ago would have left it (inserting is what the table allows). */
const insertOld = (id: string, daysAgo: number) =>
  run(`INSERT INTO audit_log (id, org_id, environment, ts, actor_type, actor_id, action, resource_type, resource_id)
    VALUES ('${id}', '${org.org_id}', 'live', now() - interval '${daysAgo} days', 'api_key', 'key_old', 'rule.create', 'rule', 'rule_old')`)

beforeAll(async () => {
  server = await startServer()
  org = await bootstrapOrg(server.databaseUrl, "append-only", "team")
  const created = await call(server, "POST", "/api/v1/teams", { key: org.api_key_live!, body: { name: "kept" } })
  expect(created.status).toBe(201)
})
afterAll(() => server?.stop())

describe("the audit log is append-only in the database", () => {
  it("refuses UPDATE, DELETE and TRUNCATE from any client, and the entry stays as written", async () => {
    const [before] = await entries()
    expect(before).toMatchObject({ action: "team.create" })
    expect(await refusal(`UPDATE audit_log SET action = 'team.nothing' WHERE id = '${before.id}'`)).toContain("append-only")
    expect(await refusal(`DELETE FROM audit_log WHERE id = '${before.id}'`)).toContain("append-only")
    expect(await refusal("TRUNCATE audit_log")).toContain("append-only")
    expect(await entries()).toContainEqual(before)
  })

  it("the purge cannot take entries younger than a day", async () => {
    expect(await refusal("SELECT audit_log_purge(now())")).toContain("append-only")
    expect((await entries()).length).toBeGreaterThan(0)
  })
})

describe("retention", () => {
  it("a node purges the entries older than AUDIT_RETENTION_DAYS, and only those", async () => {
    expect(Exit.isSuccess(await insertOld("aud_old_400", 400))).toBe(true)
    expect(Exit.isSuccess(await insertOld("aud_old_10", 10))).toBe(true)
    expect((await entries("&actor_id=key_old")).map((e) => e.id).sort()).toEqual(["aud_old_10", "aud_old_400"])
    const purging = await startServer({ databaseUrl: server.databaseUrl, env: { AUDIT_RETENTION_DAYS: "30" } })
    try {
      const left = await waitFor(
        () => entries("&actor_id=key_old"),
        (found) => !found.some((e) => e.id === "aud_old_400"),
        { what: "the purge of the 400-day-old entry" }
      )
      expect(left.map((e) => e.id)).toEqual(["aud_old_10"])
      expect((await entries("&action=team.create")).length).toBe(1)
    } finally {
      await purging.stop()
    }
  })
})
