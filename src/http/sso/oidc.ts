import { Data, Effect } from "effect"
import { createHash } from "node:crypto"
import * as client from "openid-client"
import type { SignInSettings } from "../../store/sso-sign-in-repo.ts"

/**
 * The OpenID Connect client side of sign-in, all of it done by `openid-client`: discovery, PKCE,
 * the authorization URL, the code exchange and the ID token's validation (issuer, audience,
 * nonce, expiry, and its signature against the provider's published keys).
 */

/** The identity provider could not be reached, or its answer was refused; `message` says why (never a token). */
export class OidcFailure extends Data.TaggedError("OidcFailure")<{
  readonly reason: "provider_unreachable" | "provider_error" | "id_token_rejected"
  readonly message: string
}> {}

const isPlainHttp = (issuer: string) => new URL(issuer).protocol === "http:"

const describe = (error: unknown): string => {
  if (error instanceof client.AuthorizationResponseError) {
    return `the identity provider answered ${error.error}${error.error_description ? `: ${error.error_description}` : ""}`
  }
  if (error instanceof client.ResponseBodyError) {
    return `the identity provider refused the code: ${error.error}${error.error_description ? ` (${error.error_description})` : ""}`
  }
  if (!(error instanceof Error)) return String(error)
  // The library wraps the precise reason (which claim, which check) in its cause.
  const cause = error.cause instanceof Error ? `: ${error.cause.message}` : ""
  return `${error.message}${cause}`
}

/**
 * Discovered configurations (with the provider's keys they fetch), by issuer, client and secret,
 * for a few minutes: a sign-in's two legs and the next people's sign-ins reuse them instead of
 * asking the provider again. A changed setting is another key; a failed discovery is not kept.
 */
const discovered = new Map<string, { readonly config: client.Configuration; readonly until: number }>()
const keepMs = 5 * 60_000
const keepAtMost = 200

const cacheKey = (settings: SignInSettings) =>
  [settings.issuer, settings.clientId, createHash("sha256").update(settings.clientSecret).digest("base64url")].join("\n")

/**
 * The provider's configuration, from its discovery document. A plain-http issuer is accepted
 * only because the settings allow it on loopback alone (src/domain/sso.ts); signatures are
 * checked on the ID token even though it comes straight from the token endpoint.
 */
const discover = (settings: SignInSettings) =>
  Effect.suspend(() => {
    const key = cacheKey(settings)
    const kept = discovered.get(key)
    if (kept !== undefined && kept.until > Date.now()) return Effect.succeed(kept.config)
    return Effect.tryPromise({
      try: () =>
        client.discovery(new URL(settings.issuer), settings.clientId, settings.clientSecret, undefined, {
          execute: [client.enableNonRepudiationChecks, ...(isPlainHttp(settings.issuer) ? [client.allowInsecureRequests] : [])]
        }),
      catch: (error) => new OidcFailure({ reason: "provider_unreachable", message: `the identity provider's discovery failed: ${describe(error)}` })
    }).pipe(Effect.tap((config) =>
      Effect.sync(() => {
        if (discovered.size >= keepAtMost) discovered.clear()
        discovered.set(key, { config, until: Date.now() + keepMs })
      })
    ))
  })

export interface AuthorizationRequest {
  readonly url: string
  readonly state: string
  readonly codeVerifier: string
  readonly nonce: string
}

/** Where to send the person's browser, with a fresh state, nonce and PKCE (S256) verifier. */
export const authorizationRequest = (settings: SignInSettings, redirectUri: string) =>
  Effect.gen(function*() {
    const config = yield* discover(settings)
    const codeVerifier = client.randomPKCECodeVerifier()
    const codeChallenge = yield* Effect.promise(() => client.calculatePKCECodeChallenge(codeVerifier))
    const state = client.randomState()
    const nonce = client.randomNonce()
    const url = client.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: "openid email profile",
      code_challenge: codeChallenge,
      code_challenge_method: "S256",
      state,
      nonce
    })
    return { url: url.href, state, codeVerifier, nonce } satisfies AuthorizationRequest
  })

/**
 * The ID token's claims for the provider's answer at `callbackUrl` (the redirect URI with the
 * answer's query), once the library has exchanged the code and validated the token.
 */
export const signInClaims = (
  settings: SignInSettings,
  callbackUrl: URL,
  checks: { readonly state: string; readonly codeVerifier: string; readonly nonce: string }
) =>
  Effect.gen(function*() {
    const config = yield* discover(settings)
    const tokens = yield* Effect.tryPromise({
      try: () =>
        client.authorizationCodeGrant(config, callbackUrl, {
          pkceCodeVerifier: checks.codeVerifier,
          expectedState: checks.state,
          expectedNonce: checks.nonce,
          idTokenExpected: true
        }),
      catch: (error) =>
        new OidcFailure({
          reason: error instanceof client.AuthorizationResponseError ? "provider_error" : "id_token_rejected",
          message: describe(error)
        })
    })
    const claims = tokens.claims()
    if (claims === undefined) return yield* new OidcFailure({ reason: "id_token_rejected", message: "the identity provider sent no ID token" })
    return claims as Readonly<Record<string, unknown>>
  })
