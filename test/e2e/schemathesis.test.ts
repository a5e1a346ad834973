import { execFile } from "node:child_process"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest"
import { bootstrapOrg, startServer, type TestServer, withStore } from "../support/harness.ts"

const run = promisify(execFile)
const config = join(import.meta.dirname, "..", "..", "infra", "schemathesis", "schemathesis.toml")
/** Examples per operation: enough to find a looser document, bounded for CI's time. */
const examples = Number(process.env.SCHEMATHESIS_EXAMPLES ?? 25)

/**
 * Schemathesis (all checks) against each OpenAPI document, served by a real service: every
 * request valid by the document is answered as the document says (a schema-valid request
 * refused with 400 means the document is looser than the server; infra/schemathesis has why
 * 422 is accepted). Each surface gets an org of its own (the stateful phase deletes what it can),
 * with the management rate limits lifted (its org's, and its address's for invalid credentials, which
 * the auth checks send for each security scheme), so that what is tested is the API, not the 429.
 */
describe("the OpenAPI documents, fuzzed by Schemathesis", () => {
  let server: TestServer
  beforeAll(async () => {
    server = await startServer({ env: { LOG_PARTITIONS: "4", ENGINE_RATE_LIMIT_SCALE: "0", MANAGEMENT_ANONYMOUS_RATE_LIMIT: "100000" } })
  })
  afterAll(() => server?.stop())

  const fuzz = (document: string, key: string) =>
    run(inject("schemathesisBin"), [
      "--config-file",
      config,
      "run",
      `${server.baseUrl}${document}`,
      "--checks",
      "all",
      "--max-examples",
      String(examples),
      "--workers",
      "1",
      "--seed",
      "1",
      "-H",
      `Authorization: Bearer ${key}`,
      // One worker: with two threads Hypothesis's generator once failed on its own (a FlakyFailure
      // inside its example cache, before any request was sent); one thread takes no longer here.
      // Hypothesis's health checks time the data generation, which a busy CI machine slows: they
      // judge the generator, not the API, and failed one run by it.
      "--suppress-health-check",
      "all"
    ], { cwd: tmpdir(), maxBuffer: 64 * 1024 * 1024, env: { ...process.env, NO_COLOR: "1" } }).then(
      ({ stdout }) => ({ ok: true, output: stdout }),
      (e: { stdout?: string; stderr?: string }) => ({ ok: false, output: `${e.stdout ?? ""}${e.stderr ?? ""}` })
    )

  const orgFor = async (name: string) => {
    const org = await bootstrapOrg(server.databaseUrl, name, "team")
    await withStore(
      server.databaseUrl,
      Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE orgs SET rate_limit_per_minute = 1000000 WHERE id = ${org.org_id}`)
    )
    return org
  }

  it("the management API answers every schema-valid request as its document says", { timeout: 600_000 }, async () => {
    const result = await fuzz("/api/v1/openapi.json", (await orgFor("fuzz-management")).api_key_live!)
    expect(result.ok, result.output.slice(0, 8_000) + "\n…\n" + result.output.slice(-8_000)).toBe(true)
  })

  it("the engine API answers every schema-valid request as its document says", { timeout: 600_000 }, async () => {
    const result = await fuzz("/engine/v1/openapi.json", (await orgFor("fuzz-engine")).license_key)
    expect(result.ok, result.output.slice(0, 8_000) + "\n…\n" + result.output.slice(-8_000)).toBe(true)
  })
})
