import { randomUUID } from "node:crypto"
import type { FakeScript, FakeUsage } from "./script.ts"
import type { ProtocolHandler } from "./server.ts"

/**
 * Gemini (POST …/models/{model}:streamGenerateContent?alt=sse and :generateContent), the way
 * Gemini CLI calls it. The first turn asks the run_shell_command tool to run the script's `shell`;
 * once the last content carries a functionResponse (or without `shell`), the answer is
 * `finalText`. A request for JSON (`responseJsonSchema`: the CLI's router, next-speaker check and
 * other helpers) gets an object of that schema (`answerFor`). Every response reports `usageFor`
 * as the API does: promptTokenCount counts every input token, the cached ones
 * (cachedContentTokenCount) included. Gemini reports no cache writes, so the script's `cacheWrite`
 * is counted as plain input. Streaming sends the text or the call, the finish reason and the usage
 * in one chunk (one AfterModel hook per model call). :countTokens is answered too (it asks for no
 * answer, but a CLI may call it).
 */
export const gemini: ProtocolHandler = (req, res, body, script) => {
  const [path = "", query = ""] = (req.url ?? "").split("?")
  const m = /\/models\/([^/:]+):(streamGenerateContent|generateContent|countTokens)$/.exec(path)
  if (req.method !== "POST" || !m) return false
  const model = decodeURIComponent(m[1] ?? "gemini-2.5-flash")
  const method = m[2]
  if (method === "countTokens") {
    res.writeHead(200, { "content-type": "application/json" })
    res.end(JSON.stringify({ totalTokens: script.usage.input + script.usage.cacheRead + script.usage.cacheWrite }))
    return true
  }
  const schema = body?.generationConfig?.responseJsonSchema ?? body?.generationConfig?.responseSchema
  const parts = schema ? [{ text: JSON.stringify(answerFor(schema)) }] : partsFor(body, script)
  const usage = usageFor(path, body, script.usage)
  const usageMetadata = {
    promptTokenCount: usage.input + usage.cacheRead + usage.cacheWrite,
    ...(usage.cacheRead > 0 ? { cachedContentTokenCount: usage.cacheRead } : {}),
    candidatesTokenCount: usage.output,
    totalTokenCount: usage.input + usage.cacheRead + usage.cacheWrite + usage.output
  }
  const responseId = randomUUID().replace(/-/g, "").slice(0, 22)
  const whole = {
    candidates: [{ content: { role: "model", parts }, finishReason: "STOP", index: 0 }],
    usageMetadata,
    modelVersion: model,
    responseId
  }
  if (method === "generateContent") {
    res.writeHead(200, { "content-type": "application/json" })
    res.end(JSON.stringify(whole))
    return true
  }
  const sse = /(^|&)alt=sse(&|$)/.test(query)
  const chunks = [whole]
  if (!sse) {
    res.writeHead(200, { "content-type": "application/json" })
    res.end(JSON.stringify(chunks))
    return true
  }
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" })
  for (const chunk of chunks) res.write(`data: ${JSON.stringify(chunk)}\r\n\r\n`)
  res.end()
  return true
}

/** The model a recorded request's path asks (`…/models/<model>:…`), undefined for other paths. */
export const geminiModelOf = (path: string): string | undefined => {
  const m = /\/models\/([^/:?]+):(?:streamGenerateContent|generateContent)/.exec(path)
  return m ? decodeURIComponent(m[1] ?? "") : undefined
}

/**
 * What one request is answered to have used: the script's usage, made distinct per request (the
 * number of contents it sends) and per model (its name's length), so that a request counted twice
 * or not at all changes a session's sum. A test recomputes it from the recorded request.
 * Requests for JSON (the CLI's helpers) read no cache.
 */
export const usageFor = (path: string, body: any, base: FakeUsage): FakeUsage => {
  const contents = Array.isArray(body?.contents) ? body.contents.length : 0
  const salt = (geminiModelOf(path) ?? path).length
  const helper = body?.generationConfig?.responseJsonSchema !== undefined || body?.generationConfig?.responseSchema !== undefined
  return {
    input: base.input + 10 * contents + salt,
    output: base.output + contents + salt,
    cacheRead: helper ? 0 : base.cacheRead,
    cacheWrite: base.cacheWrite
  }
}

/**
 * An object of a response schema (OpenAPI-style `type` in upper or lower case): the first value of
 * an enum, 10 for a number (a simple task, for the router's complexity score), "user" for who
 * speaks next (so the CLI does not ask the model to go on), a short text otherwise.
 */
const answerFor = (schema: any, key = ""): unknown => {
  const type = String(schema?.type ?? "").toLowerCase()
  if (Array.isArray(schema?.enum) && schema.enum.length > 0) return key === "next_speaker" && schema.enum.includes("user") ? "user" : schema.enum[0]
  if (type === "object") {
    const out: Record<string, unknown> = {}
    for (const [k, v] of Object.entries(schema.properties ?? {})) out[k] = answerFor(v, k)
    return out
  }
  if (type === "array") return []
  if (type === "integer" || type === "number") return 10
  if (type === "boolean") return false
  return key === "next_speaker" ? "user" : "fake"
}

type Part = { readonly text: string } | { readonly functionCall: { readonly name: string; readonly args: unknown } }

const partsFor = (body: any, script: FakeScript): ReadonlyArray<Part> => {
  const contents: Array<any> = Array.isArray(body?.contents) ? body.contents : []
  const last = contents[contents.length - 1]
  const answered = Array.isArray(last?.parts) && last.parts.some((p: any) => p?.functionResponse !== undefined)
  const shell = (Array.isArray(body?.tools) ? body.tools : []).some((t: any) =>
    (t?.functionDeclarations ?? []).some((f: any) => f?.name === "run_shell_command")
  )
  if (script.shell !== undefined && !answered && shell) {
    return [
      { text: "Running it." },
      { functionCall: { name: "run_shell_command", args: { command: script.shell, description: "Run the command" } } }
    ]
  }
  return [{ text: script.finalText }]
}
