import { Effect } from "effect"
import { describe, expect, it } from "vitest"
import { checkSchemas, generatedSchemas } from "../../src/cli/schemas.ts"

/**
 * The contract files (DESIGN decision 11): the OpenAPI documents and the JSON Schemas of the log
 * records and webhook bodies are generated from the Effect schemas; those checked in under
 * schemas/ must be what the code generates, so a change of a schema is a change of the contract
 * someone decided. (The served documents are checked in test/e2e/openapi.test.ts.)
 */
describe("OpenAPI documents", () => {
  it("the files in schemas/ are what the code generates (run `npm run schemas` after changing an API)", async () => {
    expect(await Effect.runPromise(checkSchemas)).toEqual([])
  })

  it("every operation documents its security (management: a key or a person's session) and the envelope for 400, 401, 403, 429 and 500", () => {
    const openApiDocs = Object.entries(generatedSchemas())
      .filter(([name]) => name.endsWith(".openapi.json")) as Array<[string, { paths: Record<string, Record<string, any>> }]>
    expect(openApiDocs.map(([name]) => name)).toContain("management.openapi.json")
    for (const [name, doc] of openApiDocs) {
      for (const [path, operations] of Object.entries(doc.paths)) {
        for (const [method, op] of Object.entries(operations)) {
          if (name === "management.openapi.json") expect(op.security, `${method} ${path}`).toEqual([{ apiKey: [] }, { session: [] }])
          else expect(op.security, `${method} ${path}`).toHaveLength(1)
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
