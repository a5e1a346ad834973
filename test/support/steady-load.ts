import { expect } from "vitest"
import { call, type TestServer } from "./harness.ts"

/** One answer of the steady load: when it was sent (ms since the test's start), what came back, how long it took. */
export interface Answer {
  /** POST /engine/v1/signals, or the path of a read. */
  readonly what: string
  readonly at: number
  readonly ms: number
  readonly status: number
  readonly body: any
  readonly retryAfter: string | null
}

const clock = performance.now()
/** Milliseconds since this module loaded: the time line of a test. */
export const now = () => performance.now() - clock

/**
 * Signals at a steady pace through every node, one per node and tick, and the `reads` (GETs with
 * their key) each tick too; open loop: a slow answer delays nothing.
 */
export const steadyLoad = (
  nodes: ReadonlyArray<TestServer>,
  keys: ReadonlyArray<string>,
  everyMs: number,
  reads: ReadonlyArray<{ readonly path: string; readonly key?: string }> = []
) => {
  const answers: Array<Answer> = []
  const inFlight = new Set<Promise<void>>()
  let n = 0
  const send = (what: string, request: () => ReturnType<typeof call>) => {
    const at = now()
    const sent = request().then(
      (r) => void answers.push({ what, at, ms: now() - at, status: r.status, body: r.body, retryAfter: r.headers.get("retry-after") }),
      (e) => void answers.push({ what, at, ms: now() - at, status: 0, body: String(e), retryAfter: null })
    )
    inFlight.add(sent)
    void sent.finally(() => inFlight.delete(sent))
  }
  const tick = () => {
    for (const node of nodes) {
      const i = n++
      send("signal", () =>
        call(node, "POST", "/engine/v1/signals", {
          key: keys[i % keys.length]!,
          body: { type: "post-tool", adapter: "codex", session_id: `load-${i % keys.length}`, idempotency_key: `load-${i}`, metadata: { tokens_in: 5 } }
        }))
      for (const read of reads) send(read.path, () => call(node, "GET", read.path, read.key === undefined ? {} : { key: read.key }))
    }
  }
  const timer = setInterval(tick, everyMs)
  return {
    answers,
    stop: async () => {
      clearInterval(timer)
      await Promise.all(inFlight)
      return answers
    }
  }
}

/** Whether `/readyz` of the node answers 200, sampled every 100 ms while the test runs. */
export const readinessLog = (node: TestServer) => {
  const samples: Array<{ readonly at: number; readonly ready: boolean }> = []
  let running = true
  const loop = (async () => {
    while (running) {
      const at = now()
      const res = await fetch(`${node.baseUrl}/readyz`).then((r) => r.status, () => 0)
      samples.push({ at, ready: res === 200 })
      await new Promise((r) => setTimeout(r, 100))
    }
  })()
  return {
    samples,
    stop: async () => {
      running = false
      await loop
    }
  }
}

/** Every event of the org, through the cursor. */
export const allEvents = async (server: TestServer, apiKey: string) => {
  const ids: Array<string> = []
  let cursor: string | undefined
  for (;;) {
    const page = await call(server, "GET", `/api/v1/events?limit=100${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`, { key: apiKey })
    expect(page.status).toBe(200)
    ids.push(...page.body.data.map((e: { signal_id: string }) => e.signal_id))
    if (!page.body.has_more) return ids
    cursor = page.body.cursor
  }
}

/** The lines written to stdout from now until `stop` (the service under test runs in this process), with when. */
export const countingLogLines = () => {
  const lines: Array<{ readonly at: number; readonly text: string }> = []
  const write = process.stdout.write.bind(process.stdout)
  process.stdout.write = ((chunk: string | Uint8Array, ...rest: Array<any>) => {
    const at = now()
    for (const text of String(chunk).split("\n")) if (text.trim() !== "") lines.push({ at, text })
    return write(chunk, ...rest)
  }) as typeof process.stdout.write
  return { lines, stop: () => void (process.stdout.write = write) }
}
