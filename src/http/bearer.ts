/**
 * The credential of `Authorization: Bearer <credential>`, read as the HttpApi's bearer security
 * reads it (RFC 9110: the scheme in any case, then one or more spaces), so that the gateway's
 * throttling, the directly served ingest route and the API's middleware agree on what was sent.
 * "" when there is none.
 */
export const bearerCredential = (authorization: string | undefined): string => {
  if (authorization === undefined || authorization.length <= 6 || authorization.charCodeAt(6) !== 32) return ""
  if (authorization.slice(0, 6).toLowerCase() !== "bearer") return ""
  let start = 7
  while (authorization.charCodeAt(start) === 32) start++
  return authorization.slice(start)
}
