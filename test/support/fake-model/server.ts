import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { anthropic } from "./anthropic.ts"
import { chatCompletions } from "./chat-completions.ts"
import { gemini } from "./gemini.ts"
import { openaiResponses } from "./openai-responses.ts"
import { defaultScript, type FakeScript, type RecordedRequest } from "./script.ts"

/**
 * One protocol: answers the requests it recognises (returns true), leaves the others (false).
 * `body` is the parsed JSON request body (undefined when there was none).
 */
export type ProtocolHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  body: any,
  script: FakeScript
) => boolean | Promise<boolean>

const protocols: ReadonlyArray<ProtocolHandler> = [anthropic, openaiResponses, chatCompletions, gemini]

export interface FakeModelServer {
  readonly url: string
  /** Every request the server received, in order (model calls and anything else a CLI asked). */
  readonly requests: Array<RecordedRequest>
  /** Requests that asked a model for an answer (what a blocked prompt must never reach). */
  readonly modelCalls: () => ReadonlyArray<RecordedRequest>
  script: FakeScript
  readonly close: () => Promise<void>
}

/** A local stand-in for the model providers the coding tools call, on a free loopback port. */
export const startFakeModelServer = async (script: FakeScript = defaultScript): Promise<FakeModelServer> => {
  const requests: Array<RecordedRequest> = []
  const modelPaths: Array<RecordedRequest> = []
  const state = { script }
  const server = createServer(async (req, res) => {
    const chunks: Array<Buffer> = []
    for await (const chunk of req) chunks.push(chunk as Buffer)
    const text = Buffer.concat(chunks).toString("utf8")
    let body: unknown
    try {
      body = text === "" ? undefined : JSON.parse(text)
    } catch {
      body = text
    }
    const recorded = { method: req.method ?? "GET", path: req.url ?? "/", body }
    requests.push(recorded)
    for (const handle of protocols) {
      if (await handle(req, res, body, state.script)) {
        modelPaths.push(recorded)
        return
      }
    }
    // Anything else a CLI asks (feature flags, model lists, telemetry): an empty success.
    res.writeHead(req.method === "GET" ? 200 : 204, { "content-type": "application/json" })
    res.end(req.method === "GET" ? "{}" : undefined)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as AddressInfo
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    modelCalls: () => modelPaths,
    get script() {
      return state.script
    },
    set script(next: FakeScript) {
      state.script = next
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections()
        server.close(() => resolve())
      })
  }
}
