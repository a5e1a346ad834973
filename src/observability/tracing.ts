import { Config, Duration, Effect, Layer, Option } from "effect"
import { FetchHttpClient, type HttpServerRequest } from "effect/http"
import { OtlpSerialization, OtlpTracer } from "effect/observability"

/**
 * A span around an internal step (an append, a batch, its fold and commit). No stack trace is
 * captured: it would say only where the step is defined, and capturing one costs every call
 * (`npm run bench`, ingest: ~2% of the service's CPU in Error construction alone).
 */
export const stepSpan = (name: string, attributes?: Record<string, unknown>) =>
  Effect.withSpan(name, attributes ? { attributes } : undefined, { captureStackTrace: false })

/** Requests never traced: the probes a balancer or kubelet sends every few seconds. */
export const untracedRequest = (request: HttpServerRequest.HttpServerRequest) => request.url === "/healthz" || request.url === "/readyz"

/** A `k=v,k2=v2` list (OTEL_EXPORTER_OTLP_HEADERS), values percent-decoded, as the spec has it. */
const headerList = (text: string): Record<string, string> =>
  Object.fromEntries(
    text.split(",").map((pair) => pair.split("=")).filter((kv) => kv.length >= 2 && kv[0]!.trim() !== "").map((
      [k, ...v]
    ) => [k!.trim(), decodeURIComponent(v.join("=").trim())])
  )

/** The traces URL: OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as it is, else OTEL_EXPORTER_OTLP_ENDPOINT + `/v1/traces`. */
const tracesUrl = Effect.gen(function*() {
  const traces = yield* Config.option(Config.String("OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"))
  if (Option.isSome(traces)) return Option.some(traces.value)
  const base = yield* Config.option(Config.String("OTEL_EXPORTER_OTLP_ENDPOINT"))
  return Option.map(base, (url) => `${url.replace(/\/+$/, "")}/v1/traces`)
})

const protocol = Config.Literals(["http/protobuf", "http/json", "grpc"], "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL").pipe(
  Config.orElse(() => Config.Literals(["http/protobuf", "http/json", "grpc"], "OTEL_EXPORTER_OTLP_PROTOCOL")),
  Config.withDefault("http/protobuf" as const)
)

/**
 * OpenTelemetry traces, exported over OTLP/HTTP by Effect's own exporter (effect/observability),
 * when OTEL_EXPORTER_OTLP_ENDPOINT (or _TRACES_ENDPOINT) is set: every Effect span of the service
 * (a request, an append, a batch's fold and commit, repositories' methods) goes to the collector.
 * The standard variables apply: OTEL_EXPORTER_OTLP_PROTOCOL (http/protobuf, default, or
 * http/json), OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME (default signal-engine),
 * OTEL_RESOURCE_ATTRIBUTES, OTEL_BSP_SCHEDULE_DELAY (ms between exports, default 5000),
 * OTEL_SDK_DISABLED and OTEL_TRACES_EXPORTER (`none` turns it off). Without an endpoint nothing
 * is traced or exported, and requests pay nothing for it.
 */
/** The traces URL when traces are to be exported (an endpoint set, the SDK not disabled, the exporter otlp). */
const exportTo = Effect.gen(function*() {
  const url = yield* tracesUrl
  const disabled = yield* Config.Boolean("OTEL_SDK_DISABLED").pipe(Config.withDefault(false))
  const exporters = yield* Config.String("OTEL_TRACES_EXPORTER").pipe(Config.withDefault("otlp"))
  return disabled || !exporters.split(",").map((e) => e.trim()).includes("otlp") ? Option.none<string>() : url
})

/**
 * Which requests the HTTP server traces: none when nothing is exported (a request span costs
 * the ingest path measurably, for nobody), else all but the probes.
 */
export const requestsUntraced = Effect.map(
  exportTo,
  (url): (request: HttpServerRequest.HttpServerRequest) => boolean => Option.isNone(url) ? () => true : untracedRequest
).pipe(Effect.orDie)

export const TracingLive = Layer.unwrap(
  Effect.gen(function*() {
    const url = yield* exportTo
    if (Option.isNone(url)) return Layer.empty
    const wire = yield* protocol
    if (wire === "grpc") {
      return yield* Effect.die(
        "OTEL_EXPORTER_OTLP_PROTOCOL=grpc is not supported: use http/protobuf (a collector's port 4318) or http/json"
      )
    }
    const headers = yield* Config.option(Config.String("OTEL_EXPORTER_OTLP_TRACES_HEADERS")).pipe(
      Effect.flatMap((h) => (Option.isSome(h) ? Effect.succeed(h) : Config.option(Config.String("OTEL_EXPORTER_OTLP_HEADERS"))))
    )
    const delay = yield* Config.option(Config.Int("OTEL_BSP_SCHEDULE_DELAY"))
    const serviceName = yield* Config.String("OTEL_SERVICE_NAME").pipe(Config.withDefault("signal-engine"))
    return OtlpTracer.layer({
      url: url.value,
      resource: { serviceName, serviceVersion: "0.1.0" },
      headers: Option.match(headers, { onNone: () => undefined, onSome: headerList }),
      exportInterval: Option.match(delay, { onNone: () => undefined, onSome: (ms) => Duration.millis(ms) })
    }).pipe(
      Layer.provide(wire === "http/json" ? OtlpSerialization.layerJson : OtlpSerialization.layerProtobuf),
      Layer.provide(FetchHttpClient.layer)
    )
  }).pipe(Effect.orDie)
)
