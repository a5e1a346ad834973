import { execFileSync } from "node:child_process"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { request as httpRequest } from "node:http"
import { request as httpsRequest } from "node:https"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startServer, type TestServer } from "../support/harness.ts"
import { freePort } from "../support/ports.ts"

let dir: string
let cert: Buffer
let server: TestServer
let redirectPort: number

beforeAll(async () => {
  // A self-signed certificate for 127.0.0.1, made for this run.
  dir = mkdtempSync(join(tmpdir(), "signal-engine-tls-"))
  execFileSync("openssl", [
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-days",
    "1",
    "-keyout",
    join(dir, "key.pem"),
    "-out",
    join(dir, "cert.pem"),
    "-subj",
    "/CN=localhost",
    "-addext",
    "subjectAltName=IP:127.0.0.1,DNS:localhost"
  ], { stdio: "ignore" })
  cert = readFileSync(join(dir, "cert.pem"))
  redirectPort = await freePort()
  server = await startServer({
    env: {
      TLS_CERT: join(dir, "cert.pem"),
      TLS_KEY: join(dir, "key.pem"),
      HTTP_REDIRECT_PORT: String(redirectPort)
    }
  })
})
afterAll(async () => {
  await server?.stop()
  rmSync(dir, { recursive: true, force: true })
})

const get = (
  send: typeof httpRequest,
  url: string,
  options: { readonly ca?: Buffer } = {}
): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: string }> =>
  new Promise((resolve, reject) => {
    const req = send(url, { method: "GET", ...options }, (res) => {
      let body = ""
      res.on("data", (chunk: Buffer) => (body += chunk.toString()))
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }))
    })
    req.on("error", reject)
    req.end()
  })

describe("TLS", () => {
  it("serves HTTPS with the configured certificate", async () => {
    const res = await get(httpsRequest, `https://127.0.0.1:${server.port}/healthz`, { ca: cert })
    expect(res.status).toBe(200)
    expect(JSON.parse(res.body)).toEqual({ status: "ok" })
  })

  it("API errors over HTTPS are the same envelope", async () => {
    const res = await get(httpsRequest, `https://127.0.0.1:${server.port}/api/v1/org`, { ca: cert })
    expect(res.status).toBe(401)
    expect(JSON.parse(res.body).code).toBe("missing_api_key")
  })

  it("plain HTTP on the redirect port answers 308 to the same path on HTTPS", async () => {
    const res = await get(httpRequest, `http://127.0.0.1:${redirectPort}/api/v1/sessions?limit=5`)
    expect(res.status).toBe(308)
    expect(res.headers.location).toBe(`https://127.0.0.1:${server.port}/api/v1/sessions?limit=5`)
    const followed = await get(httpsRequest, String(res.headers.location).replace("/api/v1/sessions?limit=5", "/healthz"), { ca: cert })
    expect(followed.status).toBe(200)
  })

  it("the HTTPS port does not speak plain HTTP", async () => {
    await expect(get(httpRequest, `http://127.0.0.1:${server.port}/healthz`)).rejects.toThrow()
  })
})
