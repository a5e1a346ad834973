import { Config, Duration, Effect, Option } from "effect"
import type { HttpServerRequest } from "effect/http"
import { anonymousRateWindows } from "../../domain/plans.ts"
import { type RateDecision, RateLimiter } from "../../store/rate-limits.ts"
import { AppConfig } from "../../config.ts"
import { NotificationConfig } from "../../notifications/config.ts"
import { callbackPath } from "../../store/sso-repo.ts"
import { cookieSecure } from "../session-cookie.ts"

/** What the sign-in routes share: where the service is reached, its cookies' flags, the session lifetime. */
export interface SsoContext {
  /** The redirect URI for a request: PUBLIC_BASE_URL's, else the request's own host (development). */
  readonly redirectUri: (request: HttpServerRequest.HttpServerRequest) => string
  /** PUBLIC_BASE_URL's origin, the one state-changing requests must come from; undefined when unset. */
  readonly publicOrigin: string | undefined
  readonly secureCookies: boolean
  readonly sessionTtlSeconds: number
  /**
   * Counts a request of the public sign-in routes against its address (a bucket of their own,
   * MANAGEMENT_ANONYMOUS_RATE_LIMIT a minute): asking org after org is throttled like guessing keys.
   */
  readonly throttle: (request: HttpServerRequest.HttpServerRequest) => Effect.Effect<RateDecision>
}

export const makeSsoContext = Effect.gen(function*() {
  const config = yield* AppConfig
  const { publicBaseUrl } = yield* NotificationConfig
  const ttl = yield* Config.Duration("DASHBOARD_SESSION_TTL").pipe(Config.withDefault(Duration.hours(12)))
  const tls = Option.isSome(config.tls)
  const limiter = yield* RateLimiter
  const windows = anonymousRateWindows(yield* Config.Int("MANAGEMENT_ANONYMOUS_RATE_LIMIT").pipe(Config.withDefault(60)))
  return {
    redirectUri: (request) => `${publicBaseUrl ?? `${tls ? "https" : "http"}://${request.headers.host ?? "localhost"}`}${callbackPath}`,
    publicOrigin: publicBaseUrl === undefined ? undefined : new URL(publicBaseUrl).origin,
    secureCookies: cookieSecure({ tls, host: config.host }),
    sessionTtlSeconds: Math.max(1, Math.floor(Duration.toSeconds(ttl))),
    throttle: (request) => limiter.consume(`sso-ip:${Option.getOrElse(request.remoteAddress, () => "unknown")}`, windows)
  } satisfies SsoContext
})
