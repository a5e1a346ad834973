import { execFile } from "node:child_process"
import { mkdtempSync, writeFileSync } from "node:fs"
import { createServer, type Server } from "node:http"
import type { AddressInfo } from "node:net"
import { tmpdir } from "node:os"
import { join } from "node:path"
import { promisify } from "node:util"
import { afterEach, describe, expect, it } from "vitest"
import type { LoadResult, LoadSpec } from "../../bench/loadgen.ts"
import { freePort } from "../support/ports.ts"

const root = join(import.meta.dirname, "..", "..")

/** Runs the benchmark's load generator as the harness does, for a short while. */
const loadgen = async (port: number): Promise<LoadResult> => {
  const spec: LoadSpec = { port, path: "/engine/v1/signals", keys: ["lic_test"], durationS: 0.3, concurrency: 2, batch: 1 }
  const file = join(mkdtempSync(join(tmpdir(), "loadgen-")), "spec.json")
  writeFileSync(file, JSON.stringify(spec))
  const { stdout } = await promisify(execFile)(join(root, "node_modules", ".bin", "node"), [join(root, "bench", "loadgen.ts"), file])
  return JSON.parse(stdout.trim().split("\n").pop()!) as LoadResult
}

let server: Server | undefined
afterEach(() => new Promise<void>((done) => (server ? server.close(() => done()) : done())))

describe("the benchmark's load generator", () => {
  it("counts error answers by status and envelope code", async () => {
    server = createServer((req, res) => {
      req.resume()
      req.on("end", () => {
        res.writeHead(503, { "content-type": "application/json" })
        res.end(JSON.stringify({ error: "down", code: "log_unavailable", status: 503, request_id: "req_x" }))
      })
    })
    await new Promise<void>((ready) => server!.listen(0, "127.0.0.1", ready))
    const result = await loadgen((server.address() as AddressInfo).port)
    expect(result.errors).toBeGreaterThan(0)
    expect(result.errorKinds).toEqual({ "status 503 log_unavailable": result.errors })
  })

  it("counts requests that fail at the socket by their error code", async () => {
    server = undefined
    const result = await loadgen(await freePort())
    expect(result.errors).toBeGreaterThan(0)
    expect(result.errorKinds).toEqual({ "socket ECONNREFUSED": result.errors })
  })
})
