import { Effect, Option, Predicate, Schema } from "effect"
import { createServer } from "node:net"
import { AppConfig } from "../config.ts"

/** A port the service is configured to listen on cannot be bound. */
export class PortUnavailable extends Schema.TaggedError<PortUnavailable>()("PortUnavailable", {
  message: Schema.String
}) {}

/** The ports of a configuration: what each is, the setting that moves it, and the port. */
export const portsOf = (config: AppConfig["Service"]) => [
  { what: "port", setting: "PORT", port: config.port },
  ...(Option.isSome(config.tls)
    ? [{ what: "the plain-HTTP redirect port", setting: "HTTP_REDIRECT_PORT", port: config.redirectPort }]
    : [])
]

/** What an operator reads when a port cannot be bound: which one, why, and what to do. */
export const portUnavailable = (
  listen: { readonly what: string; readonly setting: string; readonly port: number },
  host: string,
  error: unknown
): PortUnavailable => {
  const code = Predicate.hasProperty(error, "code") && typeof error.code === "string" ? error.code : undefined
  const where = `${listen.what} ${listen.port} on ${host}`
  const message = code === "EADDRINUSE"
    ? `${where} is in use (EADDRINUSE): stop the other process or set ${listen.setting}`
    : code === "EACCES"
    ? `${where} needs privileges (EACCES): set ${listen.setting} to a port above 1023`
    : code === "EADDRNOTAVAIL"
    ? `${where} cannot be bound: this machine has no address ${host} (EADDRNOTAVAIL); set HOST`
    : `${where} cannot be bound (${code ?? String(error)}): check ${listen.setting} and HOST`
  return new PortUnavailable({ message })
}

const tryBind = (port: number, host: string) =>
  Effect.callback<void, unknown>((resume) => {
    const server = createServer()
    server.once("error", (error) => resume(Effect.fail(error)))
    server.listen({ port, host, exclusive: true }, () => server.close(() => resume(Effect.void)))
  })

/**
 * Binds each configured port for a moment before anything starts, so that a port in use stops
 * `serve` at once with a message, before the database, the log and the demo org (whose
 * credentials are shown once). The servers map their own listen errors the same way, for a port
 * taken in between.
 */
export const checkPortsFree = Effect.gen(function*() {
  const config = yield* AppConfig
  for (const listen of portsOf(config)) {
    yield* tryBind(listen.port, config.host).pipe(Effect.mapError((error) => portUnavailable(listen, config.host, error)))
  }
})
