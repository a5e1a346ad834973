import { maxUnpackedBytes, otlpRoutes } from "./otlp-route.ts"

/**
 * The OTLP routes in the engine API's OpenAPI document. They are served directly by the gateway
 * (otlp-route.ts), not by the HttpApi, whose bodies are JSON: so they are added to the generated
 * document here. Their messages are OTLP's own (opentelemetry-proto), named, not restated.
 */
const proto = "https://github.com/open-telemetry/opentelemetry-proto/blob/v1.11.0/opentelemetry/proto"

const body = (description: string) => ({
  "application/x-protobuf": { schema: { type: "string", contentMediaType: "application/x-protobuf", description } },
  "application/json": { schema: { type: "object", description: `${description}, in OTLP's JSON encoding` } }
})

const status = (description: string) => ({
  description,
  content: body("google.rpc.Status {code, message}, in the request's encoding (JSON when its content type was not one of these)")
})

const names = {
  logs: { message: "Logs", rejected: "rejected_log_records", proto: "collector/logs/v1/logs_service.proto" },
  metrics: { message: "Metrics", rejected: "rejected_data_points", proto: "collector/metrics/v1/metrics_service.proto" },
  traces: { message: "Trace", rejected: "rejected_spans", proto: "collector/trace/v1/trace_service.proto" }
} as const

const operation = (signal: "logs" | "metrics" | "traces") => {
  const { message, rejected } = names[signal]
  const service = `Export${message}ServiceRequest`
  return {
    tags: ["otlp"],
    operationId: `otlp.${signal}`,
    summary: `OTLP/HTTP ${signal} export (extension)`,
    description: signal === "traces"
      ? "Takes OTLP/HTTP traces (Gemini CLI exports them beside its logs to the same endpoint): read and acknowledged, kept nowhere."
      : signal === "logs"
      ? "Takes the coding tools' own OpenTelemetry log events (OTLP/HTTP, as an exporter sends them: " +
        "OTEL_EXPORTER_OTLP_ENDPOINT=<service>/engine/v1/otlp, OTEL_EXPORTER_OTLP_HEADERS=\"Authorization=Bearer <license key>\"). " +
        "Claude Code's api_request and api_error become token-milestone signals (usage, priced by the service; " +
        "keyed by request_id, so a request the hook adapter also reports counts once), user_prompt a user-prompt, " +
        "tool_result a post-tool (keyed by tool_use_id), each in the session of the event's session.id under the " +
        "adapter claude-code. Codex (codex.sse_event response.completed with token counts, user_prompt, " +
        "tool_result, a failed api_request; session conversation.id, adapter codex) and Gemini CLI " +
        "(gemini_cli.api_response, api_error, user_prompt, tool_call; adapter gemini-cli) likewise. " +
        "Other events are acknowledged and not kept. Records that cannot be taken " +
        `(no session id, a value out of range) are counted in partial_success.${rejected}; the rest are kept. ` +
        `Bodies may be gzipped (Content-Encoding: gzip; at most ${maxUnpackedBytes} bytes unpacked). ` +
        "With the org's fleet credential (Bearer flt_live_… / flt_test_…, POST /api/v1/fleet-credentials) in place of a " +
        "license key, each record is the user its user.email attribute names (the record's, else the resource's; any " +
        "letter case); a record of an identity that is no user of the org is created as a member or rejected and counted, " +
        "as the org's unknown_identities says (rejected ones in partial_success, the rest kept)."
      : "Takes OTLP/HTTP metrics, so that an exporter configured for both signals succeeds: read and " +
        "acknowledged, known names or not, and counted nowhere (the log events carry every model request " +
        "with its id, which the tools' counters only sum).",
    security: [{ licenseKey: [] }],
    requestBody: { required: true, content: body(`${service} (${proto}/${names[signal].proto})`) },
    responses: {
      "200": {
        description: `Taken: an Export${message}ServiceResponse, with partial_success ` +
          `{${rejected}, error_message} when some records were rejected`,
        content: body(`Export${message}ServiceResponse`)
      },
      "400": status("The body is not a valid request of this encoding (a truncated protobuf, JSON of the wrong shape, bad gzip)"),
      "401": status("Missing or invalid license key or fleet credential (revoked included)"),
      "403": status("The org's plan has no signals"),
      "413": status("The body, or what it unpacks to, is too large"),
      "415": status("A content type other than application/x-protobuf or application/json, or a Content-Encoding other than gzip"),
      "429": status("The key's or org's signal rate limit (Retry-After): retry later, the records already taken count once"),
      "500": status("An internal error"),
      "503": status("The signal log or the database is unavailable (Retry-After): retry, the records already taken count once")
    }
  }
}

/** The generated engine document with the OTLP paths and their tag. */
export const withOtlpPaths = (spec: Record<string, any>): Record<string, any> => ({
  ...spec,
  paths: {
    ...spec.paths,
    ...Object.fromEntries(otlpRoutes.map((route) => [route.path, { post: operation(route.signal) }]))
  },
  tags: [
    ...(spec.tags ?? []),
    { name: "otlp", description: "OpenTelemetry (OTLP/HTTP) export of the coding tools' own telemetry: usage without an adapter" }
  ]
})
