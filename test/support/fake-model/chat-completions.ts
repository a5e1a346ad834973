import { randomUUID } from "node:crypto"
import type { ServerResponse } from "node:http"
import type { FakeScript } from "./script.ts"
import type { ProtocolHandler } from "./server.ts"

/**
 * OpenAI Chat Completions (POST …/chat/completions, SSE when `stream` is true, JSON otherwise),
 * the way the Copilot CLI calls a custom provider (COPILOT_PROVIDER_BASE_URL, wire API
 * "completions"). The shell tool is the function tool the request offers that takes a `command`
 * string (Copilot's `bash`, preferred by name). The first turn calls it with the script's `shell`;
 * once the conversation holds a tool result (role `tool`), or without `shell` or a shell tool,
 * the answer is `finalText`. Every response reports the script's usage the way the API does:
 * `prompt_tokens` counts every input token, cached ones included, with
 * `prompt_tokens_details.cached_tokens` the cache reads and `cache_creation_tokens` the cache
 * writes (the field GitHub's own endpoint adds for models that write a cache).
 */
export const chatCompletions: ProtocolHandler = (req, res, body, script) => {
  const path = (req.url ?? "").split("?")[0] ?? ""
  if (req.method !== "POST" || !/\/chat\/completions$/.test(path)) return false
  const model = typeof body?.model === "string" ? body.model : "gpt-4.1"
  const id = `chatcmpl-${randomUUID().replace(/-/g, "").slice(0, 24)}`
  const created = Math.floor(Date.now() / 1000)
  const answer = answerFor(body, script)
  const prompt = script.usage.input + script.usage.cacheRead + script.usage.cacheWrite
  const usage = {
    prompt_tokens: prompt,
    completion_tokens: script.usage.output,
    total_tokens: prompt + script.usage.output,
    prompt_tokens_details: { cached_tokens: script.usage.cacheRead, cache_creation_tokens: script.usage.cacheWrite }
  }
  const toolCalls = answer.kind === "tool"
    ? [{ id: `call_${randomUUID().replace(/-/g, "").slice(0, 24)}`, type: "function", function: { name: answer.name, arguments: JSON.stringify(answer.args) } }]
    : undefined
  const finish = answer.kind === "tool" ? "tool_calls" : "stop"
  if (body?.stream !== true) {
    res.writeHead(200, { "content-type": "application/json" })
    res.end(JSON.stringify({
      id,
      object: "chat.completion",
      created,
      model,
      choices: [{
        index: 0,
        message: { role: "assistant", content: answer.kind === "text" ? answer.text : null, ...(toolCalls ? { tool_calls: toolCalls } : {}) },
        finish_reason: finish
      }],
      usage
    }))
    return true
  }
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
  const chunk = (choices: ReadonlyArray<unknown>, extra: Record<string, unknown> = {}) =>
    writeData(res, { id, object: "chat.completion.chunk", created, model, choices, ...extra })
  if (answer.kind === "text") {
    chunk([{ index: 0, delta: { role: "assistant", content: "" }, finish_reason: null }])
    chunk([{ index: 0, delta: { content: answer.text }, finish_reason: null }])
  } else {
    chunk([{ index: 0, delta: { role: "assistant", content: null, tool_calls: toolCalls!.map((c, index) => ({ index, ...c })) }, finish_reason: null }])
  }
  chunk([{ index: 0, delta: {}, finish_reason: finish }])
  // stream_options.include_usage: the usage comes last, in a chunk without choices.
  chunk([], { usage })
  res.write("data: [DONE]\n\n")
  res.end()
  return true
}

type Answer =
  | { readonly kind: "text"; readonly text: string }
  | { readonly kind: "tool"; readonly name: string; readonly args: Record<string, unknown> }

const answerFor = (body: any, script: FakeScript): Answer => {
  const messages: Array<any> = Array.isArray(body?.messages) ? body.messages : []
  // A tool result anywhere in the conversation: the CLI may put messages of its own after it
  // (a hook's additional context goes in as a message of its own).
  const answered = messages.some((m) => m?.role === "tool")
  const shell = shellTool(body?.tools)
  if (script.shell !== undefined && !answered && shell) {
    const args: Record<string, unknown> = { command: script.shell }
    if (shell.properties.description) args.description = "Run the command"
    return { kind: "tool", name: shell.name, args }
  }
  return { kind: "text", text: script.finalText }
}

/** The offered function tool that runs a shell command: `bash` by name, else any taking a `command` string. */
const shellTool = (tools: unknown): { name: string; properties: Record<string, any> } | undefined => {
  const offered = (Array.isArray(tools) ? tools : [])
    .map((t: any) => ({ name: t?.function?.name, properties: t?.function?.parameters?.properties ?? {} }))
    .filter((t) => typeof t.name === "string" && t.properties?.command?.type === "string")
  return offered.find((t) => t.name === "bash") ?? offered.find((t) => /shell|bash|exec|terminal/i.test(t.name))
}

const writeData = (res: ServerResponse, data: unknown) => {
  res.write(`data: ${JSON.stringify(data)}\n\n`)
}
