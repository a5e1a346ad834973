import { timingSafeEqual } from "node:crypto"

/**
 * The dashboard session's cookie and the CSRF rule for requests made with it. The cookie holds
 * only the session's opaque id; `SameSite=Lax` keeps it off cross-site subrequests, and the CSRF
 * token header plus the Origin check cover what Lax lets through.
 */

export const sessionCookieName = "se_session"
/** The header the dashboard sends the session's CSRF token in, on every state-changing request. */
export const csrfHeader = "x-csrf-token"

const loopbackHosts = new Set(["127.0.0.1", "::1", "localhost"])

/**
 * `Secure` is left out only when the service itself is served over plain http on a loopback
 * address (tests, development): a browser does not send a Secure cookie to such an origin
 * consistently, and nothing else can reach it. Any other address, or TLS, gets `Secure`.
 */
export const cookieSecure = (served: { readonly tls: boolean; readonly host: string }): boolean =>
  served.tls || !loopbackHosts.has(served.host.replace(/^\[|\]$/g, ""))

export const sessionCookie = (id: string, options: { readonly maxAgeSeconds: number; readonly secure: boolean }): string =>
  [
    `${sessionCookieName}=${id}`,
    "Path=/",
    "HttpOnly",
    "SameSite=Lax",
    `Max-Age=${Math.max(0, Math.floor(options.maxAgeSeconds))}`,
    ...(options.secure ? ["Secure"] : [])
  ].join("; ")

/** The cookie that removes it (sign-out, expired session). */
export const clearedSessionCookie = (secure: boolean): string => sessionCookie("", { maxAgeSeconds: 0, secure })

/** A cookie's value in a request's Cookie header, if it is there and not empty. */
export const cookieValue = (header: string | undefined, name: string): string | undefined => {
  for (const part of (header ?? "").split(";")) {
    const eq = part.indexOf("=")
    if (eq > 0 && part.slice(0, eq).trim() === name) {
      const value = part.slice(eq + 1).trim()
      return value === "" ? undefined : value
    }
  }
  return undefined
}

/** The session id a request's Cookie header carries, if any. */
export const sessionIdOf = (cookieHeader: string | undefined): string | undefined => cookieValue(cookieHeader, sessionCookieName)

const safeMethods = new Set(["GET", "HEAD", "OPTIONS"])

/**
 * Whether a request made with the session cookie may go on: reads always; a state-changing
 * request only with the session's CSRF token in its header and, when the browser sends an
 * Origin, from the service's own origin.
 */
export const csrfAllows = (request: {
  readonly method: string
  readonly origin: string | undefined
  readonly token: string | undefined
  readonly expectedOrigin: string
  readonly sessionToken: string
}): boolean => {
  if (safeMethods.has(request.method.toUpperCase())) return true
  if (request.origin !== undefined && request.origin !== request.expectedOrigin) return false
  if (request.token === undefined) return false
  const given = Buffer.from(request.token)
  const expected = Buffer.from(request.sessionToken)
  return given.length === expected.length && timingSafeEqual(given, expected)
}
