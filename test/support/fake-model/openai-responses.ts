import { randomUUID } from "node:crypto"
import type { ServerResponse } from "node:http"
import type { FakeScript } from "./script.ts"
import type { ProtocolHandler } from "./server.ts"

/**
 * OpenAI Responses (POST …/responses, SSE when `stream` is true, JSON otherwise), the way the
 * Codex CLI calls it. The shell tool is whichever the request offers, found by name and shape:
 * a function tool taking `cmd` (unified exec, `exec_command`) or `command` (`shell`,
 * `shell_command`: an argv array or a string, as its schema says), or the built-in `local_shell`.
 * The first turn calls it with the script's `shell`; once the input carries that call's output
 * (or without `shell`, or when no shell tool is offered), the answer is `finalText`. Every
 * response reports the script's usage the way the API does: `input_tokens` counts every input
 * token, cached ones included, and `input_tokens_details.cached_tokens` says how many of them were
 * read from the cache (the API has no cache writes to report: a write is priced as plain input).
 */
export const openaiResponses: ProtocolHandler = (req, res, body, script) => {
  const path = (req.url ?? "").split("?")[0] ?? ""
  if (req.method !== "POST" || !/\/responses$/.test(path)) return false
  const model = typeof body?.model === "string" ? body.model : "gpt-5"
  const responseId = `resp_${hex()}`
  const output = outputFor(body, script)
  const usage = {
    input_tokens: script.usage.input + script.usage.cacheRead + script.usage.cacheWrite,
    input_tokens_details: { cached_tokens: script.usage.cacheRead },
    output_tokens: script.usage.output,
    output_tokens_details: { reasoning_tokens: 0 },
    total_tokens: script.usage.input + script.usage.cacheRead + script.usage.cacheWrite + script.usage.output
  }
  const created = Math.floor(Date.now() / 1000)
  const response = (status: string, items: ReadonlyArray<unknown>, withUsage: boolean) => ({
    id: responseId,
    object: "response",
    created_at: created,
    status,
    model,
    output: items,
    ...(withUsage ? { usage } : {})
  })
  if (body?.stream !== true) {
    res.writeHead(200, { "content-type": "application/json", "x-request-id": `req_${hex()}` })
    res.end(JSON.stringify(response("completed", output, true)))
    return true
  }
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", "x-request-id": `req_${hex()}` })
  let sequence = 0
  const send = (type: string, data: Record<string, unknown>) => writeEvent(res, type, { type, sequence_number: sequence++, ...data })
  send("response.created", { response: response("in_progress", [], false) })
  output.forEach((item, output_index) => {
    if (item.type === "message") {
      const text = item.content[0]?.text ?? ""
      send("response.output_item.added", { output_index, item: { ...item, status: "in_progress", content: [] } })
      send("response.content_part.added", { output_index, item_id: item.id, content_index: 0, part: { type: "output_text", text: "", annotations: [] } })
      send("response.output_text.delta", { output_index, item_id: item.id, content_index: 0, delta: text })
      send("response.output_text.done", { output_index, item_id: item.id, content_index: 0, text })
      send("response.content_part.done", { output_index, item_id: item.id, content_index: 0, part: item.content[0] })
    } else if (item.type === "function_call") {
      send("response.output_item.added", { output_index, item: { ...item, status: "in_progress", arguments: "" } })
      send("response.function_call_arguments.delta", { output_index, item_id: item.id, delta: item.arguments })
      send("response.function_call_arguments.done", { output_index, item_id: item.id, arguments: item.arguments })
    } else {
      send("response.output_item.added", { output_index, item: { ...item, status: "in_progress" } })
    }
    send("response.output_item.done", { output_index, item })
  })
  send("response.completed", { response: response("completed", output, true) })
  res.end()
  return true
}

type Item =
  | {
    readonly type: "message"
    readonly id: string
    readonly status: "completed"
    readonly role: "assistant"
    readonly content: ReadonlyArray<{ readonly type: "output_text"; readonly text: string; readonly annotations: ReadonlyArray<unknown> }>
  }
  | {
    readonly type: "function_call"
    readonly id: string
    readonly call_id: string
    readonly name: string
    readonly arguments: string
    readonly status: "completed"
  }
  | { readonly type: "local_shell_call"; readonly id: string; readonly call_id: string; readonly status: "completed"; readonly action: unknown }

/** The shell tool the request offers, and how to call it with a command line. */
const shellTool = (tools: ReadonlyArray<any>): ((command: string, callId: string) => Item) | undefined => {
  const fn = (name: string, args: unknown) => (command: string, call_id: string): Item => ({
    type: "function_call",
    id: `fc_${hex()}`,
    call_id,
    name,
    arguments: JSON.stringify(args === "cmd" ? { cmd: command } : args === "string" ? { command } : { command: ["bash", "-lc", command] }),
    status: "completed"
  })
  for (const t of tools) {
    const props = t?.parameters?.properties ?? {}
    if (t?.type === "function" && props.cmd?.type === "string" && /exec|shell|command/i.test(String(t.name))) return fn(t.name, "cmd")
  }
  for (const t of tools) {
    const props = t?.parameters?.properties ?? {}
    if (t?.type !== "function" || !/^(shell|shell_command|bash|run_shell_command)$/i.test(String(t.name)) || !props.command) continue
    return fn(t.name, props.command.type === "array" ? "argv" : "string")
  }
  if (tools.some((t) => t?.type === "local_shell")) {
    return (command, call_id) => ({
      type: "local_shell_call",
      id: `lsh_${hex()}`,
      call_id,
      status: "completed",
      action: { type: "exec", command: ["bash", "-lc", command], env: {}, timeout_ms: 60_000, working_directory: null, user: null }
    })
  }
  return undefined
}

const outputFor = (body: any, script: FakeScript): ReadonlyArray<Item> => {
  const input: ReadonlyArray<any> = Array.isArray(body?.input) ? body.input : []
  const answered = input.some((i) => i?.type === "function_call_output" || i?.type === "custom_tool_call_output" || i?.type === "local_shell_call_output")
  const call = shellTool(Array.isArray(body?.tools) ? body.tools : [])
  const message = (text: string): Item => ({
    type: "message",
    id: `msg_${hex()}`,
    status: "completed",
    role: "assistant",
    content: [{ type: "output_text", text, annotations: [] }]
  })
  if (script.shell !== undefined && !answered && call) return [message("Running it."), call(script.shell, `call_${hex()}`)]
  return [message(script.finalText)]
}

const hex = () => randomUUID().replace(/-/g, "").slice(0, 24)

const writeEvent = (res: ServerResponse, event: string, data: unknown) => {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`)
}
