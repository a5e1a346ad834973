import { randomUUID } from "node:crypto"
import type { ServerResponse } from "node:http"
import type { FakeScript } from "./script.ts"
import type { ProtocolHandler } from "./server.ts"

/**
 * Anthropic Messages (POST /v1/messages, SSE when `stream` is true, JSON otherwise), the way
 * Claude Code calls it. The first turn asks the Bash tool to run the script's `shell`; once the
 * last user message carries a tool_result (or without `shell`), the answer is `finalText`. Every
 * response reports the script's usage, cache reads and writes included, in message_start (input
 * side) and message_delta (output tokens), as the API does.
 */
export const anthropic: ProtocolHandler = (req, res, body, script) => {
  const path = (req.url ?? "").split("?")[0] ?? ""
  if (req.method !== "POST" || !/\/v1\/messages$/.test(path)) return false
  const model = typeof body?.model === "string" ? body.model : "claude-sonnet-4-5"
  const content = contentFor(body, script)
  const id = `msg_${randomUUID().replace(/-/g, "").slice(0, 24)}`
  const usage = {
    input_tokens: script.usage.input,
    cache_creation_input_tokens: script.usage.cacheWrite,
    cache_read_input_tokens: script.usage.cacheRead,
    output_tokens: script.usage.output
  }
  const stopReason = content.some((c) => c.type === "tool_use") ? "tool_use" : "end_turn"
  if (body?.stream !== true) {
    res.writeHead(200, { "content-type": "application/json", "request-id": `req_${id}` })
    res.end(JSON.stringify({ id, type: "message", role: "assistant", model, content, stop_reason: stopReason, stop_sequence: null, usage }))
    return true
  }
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", "request-id": `req_${id}` })
  const send = (event: string, data: unknown) => writeEvent(res, event, data)
  send("message_start", {
    type: "message_start",
    message: { id, type: "message", role: "assistant", model, content: [], stop_reason: null, stop_sequence: null, usage: { ...usage, output_tokens: 1 } }
  })
  content.forEach((block, index) => {
    if (block.type === "text") {
      send("content_block_start", { type: "content_block_start", index, content_block: { type: "text", text: "" } })
      send("content_block_delta", { type: "content_block_delta", index, delta: { type: "text_delta", text: block.text } })
    } else {
      send("content_block_start", { type: "content_block_start", index, content_block: { type: "tool_use", id: block.id, name: block.name, input: {} } })
      send("content_block_delta", { type: "content_block_delta", index, delta: { type: "input_json_delta", partial_json: JSON.stringify(block.input) } })
    }
    send("content_block_stop", { type: "content_block_stop", index })
  })
  send("message_delta", { type: "message_delta", delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: script.usage.output } })
  send("message_stop", { type: "message_stop" })
  res.end()
  return true
}

type Block =
  | { readonly type: "text"; readonly text: string }
  | { readonly type: "tool_use"; readonly id: string; readonly name: string; readonly input: unknown }

const contentFor = (body: any, script: FakeScript): ReadonlyArray<Block> => {
  const messages: Array<any> = Array.isArray(body?.messages) ? body.messages : []
  const last = messages[messages.length - 1]
  const answered = Array.isArray(last?.content) && last.content.some((c: any) => c?.type === "tool_result")
  const offered = (name: string) => Array.isArray(body?.tools) && body.tools.some((t: any) => t?.name === name)
  const bash = offered("Bash")
  if (script.tool !== undefined && !answered && offered(script.tool.name)) {
    const id = `toolu_${randomUUID().replace(/-/g, "").slice(0, 24)}`
    return [{ type: "text", text: "Editing it." }, { type: "tool_use", id, name: script.tool.name, input: script.tool.input }]
  }
  if (script.shell !== undefined && !answered && bash) {
    return [
      { type: "text", text: "Running it." },
      {
        type: "tool_use",
        id: `toolu_${randomUUID().replace(/-/g, "").slice(0, 24)}`,
        name: "Bash",
        input: { command: script.shell, description: "Run the command" }
      }
    ]
  }
  return [{ type: "text", text: script.finalText }]
}

const writeEvent = (res: ServerResponse, event: string, data: unknown) => {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
}
