import { readFileSync } from "node:fs"
import { join } from "node:path"
import { Effect } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { checkSchemas, generatedSchemas, schemasDir } from "../../src/cli/schemas.ts"
import { call, startServer, type TestServer } from "../support/harness.ts"

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server?.stop())

describe("OpenAPI documents", () => {
  it("the files in schemas/ are what the code generates (run `npm run schemas` after changing an API)", async () => {
    expect(await Effect.runPromise(checkSchemas)).toEqual([])
  })

  it.each([
    ["/api/v1/openapi.json", "management.openapi.json"],
    ["/engine/v1/openapi.json", "engine.openapi.json"]
  ])("%s is served, without a key, and equals schemas/%s", async (path, file) => {
    const res = await call(server, "GET", path)
    expect(res.status).toBe(200)
    expect(res.body.openapi).toBe("3.1.0")
    expect(res.body).toEqual(JSON.parse(readFileSync(join(schemasDir, file), "utf8")))
  })

  it("every operation documents its security and the envelope for 400, 401, 403, 429 and 500", () => {
    const openApiDocs = Object.entries(generatedSchemas())
      .filter(([name]) => name.endsWith(".openapi.json"))
      .map(([, doc]) => doc) as Array<{ paths: Record<string, Record<string, any>> }>
    for (const doc of openApiDocs) {
      for (const [path, operations] of Object.entries(doc.paths)) {
        for (const [method, op] of Object.entries(operations)) {
          expect(op.security, `${method} ${path}`).toHaveLength(1)
          for (const status of ["400", "401", "403", "429", "500"]) {
            expect(op.responses[status], `${method} ${path} ${status}`).toBeDefined()
          }
        }
      }
    }
  })

  it("the documented error body is the spec's envelope", () => {
    const doc = generatedSchemas()["management.openapi.json"] as { components: { schemas: Record<string, any> } }
    const envelope = doc.components.schemas["UnauthorizedEncoded"]
    expect(Object.keys(envelope.properties).sort()).toEqual(["code", "error", "request_id", "status"])
    expect([...envelope.required].sort()).toEqual(["code", "error", "request_id", "status"])
  })

  it("carries the patterns the server checks: a client built from it sends what the server takes", () => {
    const doc = generatedSchemas()["management.openapi.json"] as any
    const limit = doc.paths["/api/v1/users"].get.parameters.find((p: any) => p.name === "limit").schema
    const pattern = new RegExp(limit.pattern)
    for (const ok of ["1", "20", "100"]) expect(pattern.test(ok), ok).toBe(true)
    for (const refused of ["", "0", "101", "007", "1e2"]) expect(pattern.test(refused), refused).toBe(false)
    const email = doc.paths["/api/v1/users"].post.requestBody.content["application/json"].schema.properties.email
    expect(new RegExp(email.pattern).test("")).toBe(false)
    expect(new RegExp(email.pattern).test("ada@example.com")).toBe(true)
  })
})
