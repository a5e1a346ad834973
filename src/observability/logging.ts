import { Cause, Config, Context, Effect, Layer, Logger, References, Tracer } from "effect"
import { RequestFacts } from "./request-facts.ts"
import { RequestId } from "./request-id.ts"
import { throttleRepeats } from "./log-throttle.ts"

/** LOG_FORMAT: `text` (default), or `json`: one JSON object a line, for a log pipeline. */
export const LogFormat = Config.Literals(["text", "json"], "LOG_FORMAT").pipe(Config.withDefault("text" as const))

/**
 * Keys have recognisable shapes (API keys `<prefix>_live_…`, license keys `lic_…`, and whatever
 * follows `Bearer`): whatever a message or an error carries, a line never prints one. (Webhook
 * secrets and chat URLs have no shape; nothing logs them.)
 */
const secretShapes = /\b(?:[a-z0-9]+_(?:live|test)_[0-9a-f]{32}|lic_[0-9a-f]{20})\b|(?<=bearer\s+)[A-Za-z0-9._~+/=-]+/gi
export const scrubSecrets = (text: string): string => text.replace(secretShapes, "[redacted]")

const messageText = (message: unknown): string => {
  const parts = Array.isArray(message) ? message : [message]
  return parts.map((part) => (typeof part === "string" ? part : JSON.stringify(part))).join(" ")
}

/**
 * One JSON line per log entry: `timestamp`, `level`, `message`, the entry's annotations, and,
 * inside a request, its `request_id` and the caller's `org_id` / `user_id` once known; inside a
 * span of an exported trace, `trace_id` and `span_id`; a failure's `cause`. Written to stderr
 * when Logger.LogToStderr says so (the CLI), else stdout.
 */
export const jsonLogger = Logger.make<unknown, void>(({ cause, date, fiber, logLevel, message }) => {
  const line: Record<string, unknown> = {
    timestamp: date.toISOString(),
    level: logLevel.toLowerCase(),
    message: messageText(message)
  }
  const requestId = fiber.getRef(RequestId)
  if (requestId !== "") line.request_id = requestId
  const facts = fiber.getRef(RequestFacts)
  if (facts.org_id !== undefined) line.org_id = facts.org_id
  if (facts.user_id !== undefined) line.user_id = facts.user_id
  Object.assign(line, fiber.getRef(References.CurrentLogAnnotations))
  const span = Context.getOrUndefined(fiber.context, Tracer.ParentSpan)
  if (span !== undefined && fiber.getRef(Tracer.Tracer) !== Tracer.nativeTracer) {
    line.trace_id = span.traceId
    line.span_id = span.spanId
  }
  if (cause.reasons.length > 0) line.cause = Cause.pretty(cause)
  const text = scrubSecrets(JSON.stringify(line))
  if (fiber.getRef(Logger.LogToStderr)) process.stderr.write(text + "\n")
  else process.stdout.write(text + "\n")
})

/**
 * The service's loggers: Effect's default (text), or JSON lines with LOG_FORMAT=json; either way a
 * warning or error repeated within 10 s is written once, with the count (`throttleRepeats`).
 */
export const LoggingLive = Layer.unwrap(
  Effect.map(LogFormat, (format) => Logger.layer([throttleRepeats(format === "json" ? jsonLogger : Logger.defaultLogger)]))
).pipe(Layer.orDie)
