import { Duration, Effect } from "effect"
import type { AttemptResult } from "../domain/delivery.ts"
import { Agent as HttpAgent, request as httpRequest } from "node:http"
import { Agent as HttpsAgent, request as httpsRequest } from "node:https"
import type { LookupFunction } from "node:net"
import { sign, signatureHeader } from "./signing.ts"
import { vetUrl, type VettedUrl } from "./url-policy.ts"

// Connections are reused across deliveries; a pooled socket is connected to an address that was vetted.
const httpAgent = new HttpAgent({ keepAlive: true, maxSockets: 64 })
const httpsAgent = new HttpsAgent({ keepAlive: true, maxSockets: 64 })

/** A lookup that answers the vetted address whatever is asked: the connection goes where the check said. */
const pinnedLookup = (target: VettedUrl): LookupFunction => (_hostname, options, callback) => {
  if (options.all) callback(null, [{ address: target.address, family: target.family }])
  else callback(null, target.address, target.family)
}

/**
 * One signed POST of `body` (the exact bytes signed) to a vetted target. Success is a 2xx within
 * `timeout` (the whole exchange up to the response head); anything else, including a timeout or
 * a connection error, is a failed attempt, never an error of the effect.
 */
export const post = (
  target: VettedUrl,
  body: string,
  secret: string,
  timeout: Duration.Duration
): Effect.Effect<AttemptResult> => postJson(target, body, { [signatureHeader]: sign(secret, body) }, timeout)

/** A POST of a JSON body with the given extra headers (chat notifications are not signed). */
export const postJson = (
  target: VettedUrl,
  body: string,
  extraHeaders: Readonly<Record<string, string>>,
  timeout: Duration.Duration
): Effect.Effect<AttemptResult> =>
  Effect.callback<AttemptResult>((resume) => {
    const started = performance.now()
    const elapsed = () => Math.round((performance.now() - started) * 10) / 10
    let settled = false
    const finish = (r: Omit<AttemptResult, "latency_ms">) => {
      if (settled) return
      settled = true
      clearTimeout(timer)
      resume(Effect.succeed({ ...r, latency_ms: elapsed() }))
    }
    const https = target.url.protocol === "https:"
    const req = (https ? httpsRequest : httpRequest)(target.url, {
      method: "POST",
      agent: https ? httpsAgent : httpAgent,
      lookup: pinnedLookup(target),
      headers: {
        "content-type": "application/json",
        "content-length": Buffer.byteLength(body),
        "user-agent": "signal-engine-webhooks/1",
        ...extraHeaders
      }
    }, (res) => {
      const status = res.statusCode ?? 0
      res.resume() // the body is not read; drain it so the socket can be reused
      const ok = status >= 200 && status < 300
      finish({ delivered: ok, status_code: status, error: ok ? null : `the receiver answered ${status}` })
    })
    const timer = setTimeout(() => {
      finish({ delivered: false, status_code: null, error: `no response within ${Duration.format(timeout)}` })
      req.destroy()
    }, Duration.toMillis(timeout))
    req.on("error", (e) => finish({ delivered: false, status_code: null, error: `connection failed: ${e.message}` }))
    req.end(body)
    return Effect.sync(() => {
      clearTimeout(timer)
      req.destroy()
    })
  })

/** Vets the URL again (DNS may have changed since registration), then posts to the vetted address. */
export const deliver = (
  rawUrl: string,
  body: string,
  secret: string,
  options: { readonly allowedHosts: ReadonlySet<string>; readonly timeout: Duration.Duration }
): Effect.Effect<AttemptResult> => deliverVetted(rawUrl, options, (target) => post(target, body, secret, options.timeout))

/** The same policy for any POST: refused URLs are a failed attempt that never connects. */
export const deliverVetted = (
  rawUrl: string,
  options: { readonly allowedHosts: ReadonlySet<string> },
  send: (target: VettedUrl) => Effect.Effect<AttemptResult>
): Effect.Effect<AttemptResult> =>
  Effect.flatMap(vetUrl(rawUrl, options.allowedHosts), (verdict) =>
    verdict._tag === "Refused"
      ? Effect.succeed({ delivered: false, status_code: null, latency_ms: 0, error: `url refused: ${verdict.reason}` })
      : send(verdict.target))
