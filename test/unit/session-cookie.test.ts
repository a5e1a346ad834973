import { describe, expect, it } from "vitest"
import { clearedSessionCookie, cookieSecure, csrfAllows, sessionCookie, sessionIdOf } from "../../src/http/session-cookie.ts"

describe("the session cookie", () => {
  it("is HttpOnly, SameSite=Lax, for the whole site, with its lifetime", () => {
    expect(sessionCookie("abc", { maxAgeSeconds: 3600, secure: true })).toBe("se_session=abc; Path=/; HttpOnly; SameSite=Lax; Max-Age=3600; Secure")
    expect(clearedSessionCookie(false)).toBe("se_session=; Path=/; HttpOnly; SameSite=Lax; Max-Age=0")
  })

  it.each([
    [{ tls: false, host: "127.0.0.1" }, false],
    [{ tls: false, host: "[::1]" }, false],
    [{ tls: false, host: "localhost" }, false],
    [{ tls: true, host: "127.0.0.1" }, true],
    [{ tls: false, host: "0.0.0.0" }, true],
    [{ tls: false, host: "signals.example.com" }, true]
  ])("served %j: Secure is %s", (served, secure) => {
    expect(cookieSecure(served)).toBe(secure)
  })

  it("is read from the Cookie header among others", () => {
    expect(sessionIdOf("a=1; se_session=xyz; b=2")).toBe("xyz")
    expect(sessionIdOf("se_session=")).toBeUndefined()
    expect(sessionIdOf("not_se_session=xyz")).toBeUndefined()
    expect(sessionIdOf(undefined)).toBeUndefined()
  })
})

describe("CSRF", () => {
  const base = { expectedOrigin: "https://signals.example.com", sessionToken: "tok-123" }
  it("lets reads through without a token", () => {
    expect(csrfAllows({ ...base, method: "GET", origin: "https://evil.example", token: undefined })).toBe(true)
  })
  it("wants the session's token on a write, from the own origin or none", () => {
    expect(csrfAllows({ ...base, method: "POST", origin: base.expectedOrigin, token: "tok-123" })).toBe(true)
    expect(csrfAllows({ ...base, method: "DELETE", origin: undefined, token: "tok-123" })).toBe(true)
    expect(csrfAllows({ ...base, method: "POST", origin: base.expectedOrigin, token: undefined })).toBe(false)
    expect(csrfAllows({ ...base, method: "PATCH", origin: base.expectedOrigin, token: "tok-124" })).toBe(false)
    expect(csrfAllows({ ...base, method: "PUT", origin: base.expectedOrigin, token: "tok" })).toBe(false)
    expect(csrfAllows({ ...base, method: "POST", origin: "https://evil.example", token: "tok-123" })).toBe(false)
  })
})
