import { randomUUID } from "node:crypto"
import type { FakeScript } from "./script.ts"
import type { ProtocolHandler } from "./server.ts"

/**
 * Gemini (POST …/models/{model}:streamGenerateContent?alt=sse and :generateContent), the way
 * Gemini CLI calls it. The first turn asks the run_shell_command tool to run the script's `shell`;
 * once the last content carries a functionResponse (or without `shell`), the answer is
 * `finalText`. Every response reports the script's usage as the API does: promptTokenCount counts
 * every input token, the cached ones (cachedContentTokenCount) included. Gemini reports no cache
 * writes, so the script's `cacheWrite` is counted as plain input. Streaming sends the text or the
 * call, the finish reason and the usage in one chunk (one AfterModel hook per model call).
 * :countTokens is answered too (it asks for no answer, but a CLI may call it).
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
  const parts = partsFor(body, script)
  const usageMetadata = {
    promptTokenCount: script.usage.input + script.usage.cacheRead + script.usage.cacheWrite,
    ...(script.usage.cacheRead > 0 ? { cachedContentTokenCount: script.usage.cacheRead } : {}),
    candidatesTokenCount: script.usage.output,
    totalTokenCount: script.usage.input + script.usage.cacheRead + script.usage.cacheWrite + script.usage.output
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
