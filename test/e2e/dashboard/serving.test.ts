import { gunzipSync } from "node:zlib"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { loadDashboardAssets } from "../../../src/http/dashboard.ts"
import { call, startServer, type TestServer } from "../../support/harness.ts"

/**
 * The shipped dashboard's size budget (docs/decisions.md): every file a browser may load, the
 * libraries included. As sent (gzip) is what a first visit costs; the raw size keeps the source
 * itself honest. Raise them only with a reason.
 */
const budget = { rawBytes: 240_000, gzippedBytes: 96_000 }

let server: TestServer
beforeAll(async () => {
  server = await startServer()
})
afterAll(() => server?.stop())

const assets = loadDashboardAssets()

describe("the dashboard's files", () => {
  it("fit the size budget", () => {
    const raw = assets.reduce((n, a) => n + a.body.length, 0)
    const gzipped = assets.reduce((n, a) => n + (a.gzipped ?? a.body).length, 0)
    expect(raw).toBeLessThanOrEqual(budget.rawBytes)
    expect(gzipped).toBeLessThanOrEqual(budget.gzippedBytes)
  })

  it("serves index.html at / with a content security policy, and every file with its type", async () => {
    const index = await fetch(`${server.baseUrl}/`)
    expect(index.status).toBe(200)
    expect(index.headers.get("content-type")).toBe("text/html; charset=utf-8")
    expect(index.headers.get("content-security-policy")).toContain("script-src 'self' 'sha256-")
    const html = await index.text()
    expect(html).toContain(`<script type="module" src="/app/app.js">`)
    for (const a of assets) {
      const res = await fetch(`${server.baseUrl}${a.path}`)
      expect(res.status, a.path).toBe(200)
      expect(res.headers.get("content-type"), a.path).toBe(
        a.path === "/" || a.path.endsWith(".html") ?
          "text/html; charset=utf-8"
          : a.path.endsWith(".css") ?
          "text/css; charset=utf-8"
          : "text/javascript; charset=utf-8"
      )
      expect(res.headers.get("x-content-type-options")).toBe("nosniff")
      expect(Buffer.from(await res.arrayBuffer()).equals(Buffer.from(a.body)), a.path).toBe(true)
    }
  })

  it("revalidates with an ETag (304 when unchanged) and sends gzip to clients that accept it", async () => {
    const first = await fetch(`${server.baseUrl}/app/app.js`)
    expect(first.headers.get("cache-control")).toBe("no-cache")
    const etag = first.headers.get("etag")!
    expect(etag).toMatch(/^"[\w-]+"$/)
    const again = await fetch(`${server.baseUrl}/app/app.js`, { headers: { "if-none-match": etag } })
    expect(again.status).toBe(304)
    expect(await again.text()).toBe("")
    // Node's fetch decompresses; a raw request shows what travels.
    const { request } = await import("node:http")
    const body = await new Promise<{ encoding: string | undefined; bytes: Buffer }>((resolve, reject) => {
      request(`${server.baseUrl}/vendor/uplot.js`, { headers: { "accept-encoding": "gzip, br" } }, (res) => {
        const chunks: Array<Buffer> = []
        res.on("data", (c: Buffer) => chunks.push(c))
        res.on("end", () => resolve({ encoding: res.headers["content-encoding"], bytes: Buffer.concat(chunks) }))
      }).on("error", reject).end()
    })
    expect(body.encoding).toBe("gzip")
    expect(gunzipSync(body.bytes).toString("utf8")).toContain("uPlot")
  })

  it("serves nothing outside its list: other paths keep the API's error envelope", async () => {
    for (const path of ["/vendor/../package.json", "/app/../../package.json", "/node_modules/preact/package.json", "/app/tsconfig.json", "/index.html"]) {
      const res = await call(server, "GET", path)
      expect(res.status, path).toBe(404)
      expect(res.body, path).toMatchObject({ code: "route_not_found", status: 404, request_id: expect.stringMatching(/^req_/) })
    }
    expect((await call(server, "GET", "/api/v1/nothing-here")).body).toMatchObject({ code: "route_not_found", status: 404 })
    expect((await call(server, "GET", "/engine/v1/nothing-here")).body).toMatchObject({ code: "route_not_found", status: 404 })
    const post = await call(server, "POST", "/", { body: {} })
    expect(post.status).toBe(405)
    expect(post.headers.get("allow")).toBe("GET")
  })
})
