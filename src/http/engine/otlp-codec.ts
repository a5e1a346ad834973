import { join } from "node:path"
import protobuf from "protobufjs"
import protojson from "protobufjs/ext/protojson.js"

/**
 * OTLP/HTTP's two encodings, read and written with protobufjs from the official message
 * definitions (otlp-proto/, copied from opentelemetry-proto): binary protobuf, and OTLP's JSON
 * (the proto3 JSON mapping, lowerCamelCase keys) through protobufjs's ProtoJSON parser, so both
 * arrive as the same plain object and bad input is refused by the library, not by hand.
 */

export type OtlpSignal = "logs" | "metrics" | "traces"
export type OtlpEncoding = "protobuf" | "json"

const protoDir = join(import.meta.dirname, "otlp-proto")

const root = new protobuf.Root()
// Imports are named from the definitions' root ("opentelemetry/proto/…"); google/protobuf's
// well-known types come with protobufjs.
root.resolvePath = (_origin, target) => (target.startsWith("google/protobuf/") ? target : join(protoDir, target))
root.loadSync([
  "opentelemetry/proto/collector/logs/v1/logs_service.proto",
  "opentelemetry/proto/collector/metrics/v1/metrics_service.proto",
  "opentelemetry/proto/collector/trace/v1/trace_service.proto",
  "google/rpc/status.proto"
])

const types = {
  logs: {
    request: root.lookupType("opentelemetry.proto.collector.logs.v1.ExportLogsServiceRequest"),
    response: root.lookupType("opentelemetry.proto.collector.logs.v1.ExportLogsServiceResponse")
  },
  metrics: {
    request: root.lookupType("opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceRequest"),
    response: root.lookupType("opentelemetry.proto.collector.metrics.v1.ExportMetricsServiceResponse")
  },
  traces: {
    request: root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceRequest"),
    response: root.lookupType("opentelemetry.proto.collector.trace.v1.ExportTraceServiceResponse")
  }
} as const
const statusType = root.lookupType("google.rpc.Status")

/**
 * The plain form of a decoded message: lowerCamelCase keys, 64-bit integers as decimal strings
 * (a timestamp in nanoseconds is past what a double holds exactly).
 */
const plain = (type: protobuf.Type, message: protobuf.Message) =>
  type.toObject(message, { longs: String, enums: String, bytes: String, arrays: true }) as Record<string, unknown>

/** The encoding a Content-Type names, or undefined for one OTLP/HTTP does not define. */
export const encodingOf = (contentType: string | undefined): OtlpEncoding | undefined => {
  const media = (contentType ?? "").split(";")[0]!.trim().toLowerCase()
  if (media === "application/x-protobuf" || media === "application/protobuf") return "protobuf"
  if (media === "application/json") return "json"
  return undefined
}

export const contentTypeOf = (encoding: OtlpEncoding) => (encoding === "json" ? "application/json" : "application/x-protobuf")

/** A request body as its plain object, or why it cannot be read. */
export const decodeRequest = (
  signal: OtlpSignal,
  encoding: OtlpEncoding,
  body: Uint8Array
): { readonly ok: true; readonly value: Record<string, unknown> } | { readonly ok: false; readonly error: string } => {
  const type = types[signal].request
  try {
    if (encoding === "protobuf") return { ok: true, value: plain(type, type.decode(body)) }
    const text = new TextDecoder("utf-8", { fatal: true }).decode(body)
    // OTLP receivers ignore fields they do not know (newer exporters add some).
    const message = protojson.fromJson(type, text.trim() === "" ? {} : JSON.parse(text), { ignoreUnknownFields: true })
    return { ok: true, value: plain(type, message) }
  } catch (e) {
    return { ok: false, error: e instanceof Error ? e.message : String(e) }
  }
}

const encodeWith = (type: protobuf.Type, encoding: OtlpEncoding, value: Record<string, unknown>): Uint8Array | string => {
  const message = type.fromObject(value)
  return encoding === "json" ? JSON.stringify(protojson.toJson(type, message)) : type.encode(message).finish()
}

/**
 * The success body: Export*ServiceResponse, with partial_success when some records were
 * rejected (their count and why); an empty message when every one was taken.
 */
export const encodeResponse = (
  signal: OtlpSignal,
  encoding: OtlpEncoding,
  rejected: number,
  errorMessage: string
): Uint8Array | string => {
  const counted = signal === "logs" ? "rejectedLogRecords" : signal === "metrics" ? "rejectedDataPoints" : "rejectedSpans"
  const value = rejected > 0 || errorMessage !== "" ? { partialSuccess: { [counted]: rejected, errorMessage } } : {}
  return encodeWith(types[signal].response, encoding, value)
}

/** The failure body: google.rpc.Status, in the request's encoding. */
export const encodeStatus = (encoding: OtlpEncoding, code: number, message: string): Uint8Array | string => encodeWith(statusType, encoding, { code, message })

/** For tests and benchmarks: a request encoded as an OTLP exporter sends it. */
export const encodeRequest = (signal: OtlpSignal, encoding: OtlpEncoding, value: Record<string, unknown>): Uint8Array | string => {
  const type = types[signal].request
  return encoding === "json" ? JSON.stringify(value) : type.encode(type.fromObject(value)).finish()
}

/** For tests: a response or Status body as its plain object. */
export const decodeAnswer = (kind: OtlpSignal | "status", encoding: OtlpEncoding, body: Uint8Array): Record<string, unknown> => {
  const type = kind === "status" ? statusType : types[kind].response
  return encoding === "json"
    ? plain(type, protojson.fromJson(type, JSON.parse(new TextDecoder().decode(body))))
    : plain(type, type.decode(body))
}
