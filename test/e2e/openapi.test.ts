import { readFileSync } from "node:fs"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { schemasDir } from "../../src/cli/schemas.ts"
import { call, startServer, type TestServer } from "../support/harness.ts"

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server?.stop())

// The documents themselves are checked without a server, in the unit tier (test/unit/contract.test.ts).
describe("OpenAPI documents", () => {
  it.each([
    ["/api/v1/openapi.json", "management.openapi.json"],
    ["/engine/v1/openapi.json", "engine.openapi.json"]
  ])("%s is served, without a key, and equals schemas/%s", async (path, file) => {
    const res = await call(server, "GET", path)
    expect(res.status).toBe(200)
    expect(res.body.openapi).toBe("3.1.0")
    expect(res.body).toEqual(JSON.parse(readFileSync(join(schemasDir, file), "utf8")))
  })
})
