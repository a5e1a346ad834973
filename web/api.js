// The one way the dashboard reaches the service: the public management API, with the key the
// user signed in with or, signed in with the org's identity provider, the session cookie and its
// CSRF token. The key lives in sessionStorage only, so it goes when the tab closes; the cookie is
// HttpOnly, and the token is kept in memory and asked for again on load (/dashboard/sso/me).

const keyItem = "signal-engine.api-key"
const messageItem = "signal-engine.sign-in-message"

export class ApiError extends Error {
  /** @param {string} message @param {number} status @param {string} code */
  constructor(message, status, code) {
    super(message)
    this.status = status
    this.code = code
  }
}

/** @type {Set<(message: string) => void>} */
const signedOutListeners = new Set()

/** @typedef {{ user: { id: string, email: string, name: string, role: string }, org: { id: string, name: string }, operations: string[], csrf_token: string }} Person */

/** The signed-in person when signed in with single sign-on, null otherwise. @type {Person | null} */
let person = null

export const auth = {
  /** @returns {string | null} */
  key: () => sessionStorage.getItem(keyItem),
  person: () => person,
  /**
   * Whether the dashboard offers what the management operation (`group.endpoint`) does: a signed-in
   * person's role decides; a pasted key is offered everything (its scopes answer, as for programs).
   * @param {string} operation
   */
  may: (operation) => person === null || person.operations.includes(operation),
  /**
   * The person of this browser's dashboard session, if it has one (and remembers its CSRF token).
   * @returns {Promise<Person | null>}
   */
  async resume() {
    const response = await fetch("/dashboard/sso/me", { headers: { accept: "application/json" } }).catch(() => null)
    person = response?.ok ? await response.json() : null
    return person
  },
  /** @param {string} key */
  signIn(key) {
    sessionStorage.setItem(keyItem, key)
    sessionStorage.removeItem(messageItem)
  },
  /**
   * @param {string} [message] why the user is back at sign-in
   * @param {boolean} [endSession] false: the dashboard is left, the service's session is not (a role it cannot serve yet)
   */
  signOut(message, endSession = true) {
    sessionStorage.removeItem(keyItem)
    const ending = person
    person = null
    // The session is ended on the service too; the cookie goes with its answer.
    if (ending && endSession) fetch("/dashboard/sso/logout", { method: "POST", headers: { "x-csrf-token": ending.csrf_token } }).catch(() => {})
    if (message) sessionStorage.setItem(messageItem, message)
    for (const listener of signedOutListeners) listener(message ?? "")
  },
  /** A message for the sign-in page, shown once. */
  takeMessage() {
    const m = sessionStorage.getItem(messageItem)
    sessionStorage.removeItem(messageItem)
    return m
  },
  /** @param {(message: string) => void} listener */
  onSignedOut(listener) {
    signedOutListeners.add(listener)
    return () => signedOutListeners.delete(listener)
  }
}

/** The environment a key belongs to, from its form (`<prefix>_live_…` / `<prefix>_test_…`). */
export const environmentOf = (/** @type {string} */ key) => (/_test_/.test(key) ? "test" : "live")

/**
 * The credential headers of a request: the key's, or the session's CSRF token on a change (the
 * cookie goes by itself).
 * @param {string} method @param {string | undefined} key
 * @returns {Record<string, string>}
 */
const credentials = (method, key) => key || !person ? { authorization: `Bearer ${key ?? ""}` } : method === "GET" ? {} : { "x-csrf-token": person.csrf_token }

/**
 * @param {string} method
 * @param {string} path under /api/v1
 * @param {{ query?: Record<string, unknown>, body?: unknown, key?: string }} [options]
 * @returns {Promise<any>}
 */
export async function api(method, path, options = {}) {
  const key = options.key ?? auth.key() ?? undefined
  const url = new URL(`/api/v1${path}`, location.origin)
  for (const [name, value] of Object.entries(options.query ?? {})) {
    if (value !== undefined && value !== null && value !== "") url.searchParams.set(name, String(value))
  }
  /** @type {Record<string, string>} */
  const headers = credentials(method, key)
  if (options.body !== undefined) headers["content-type"] = "application/json"
  let response
  try {
    response = await fetch(url, {
      method,
      headers,
      ...(options.body !== undefined ? { body: JSON.stringify(options.body) } : {})
    })
  } catch {
    throw new ApiError("The service cannot be reached. Check your connection and try again.", 0, "network")
  }
  if (response.status === 204) return null
  const body = await response.json().catch(() => null)
  if (!response.ok) {
    const error = new ApiError(body?.error ?? `The request failed (${response.status}).`, response.status, body?.code ?? "error")
    // A key that stopped working (revoked, or deleted with its org) ends the session: every
    // further call would fail the same way.
    if (response.status === 401 && options.key === undefined) {
      auth.signOut(
        person ? `Your session has ended (${error.message}). Sign in again.` : `Your API key is no longer valid (${error.message}). Sign in with a current key.`
      )
    }
    throw error
  }
  return body
}

/**
 * Every page of a list, for the small lists a form picks from (users, teams, projects).
 * @param {string} path
 * @returns {Promise<Array<any>>}
 */
export async function listAll(path, max = 500) {
  /** @type {Array<any>} */
  const all = []
  let cursor = ""
  do {
    const page = await api("GET", path, { query: { limit: 100, cursor } })
    all.push(...page.data)
    cursor = page.has_more ? page.cursor : ""
  } while (cursor && all.length < max)
  return all
}

/**
 * Fetches a file the API streams (a usage export) with the signed-in key, and hands it to the
 * browser as a download. The key travels in a header, which a plain link cannot send, so the file
 * is gathered in the tab first; the service streams it all the same.
 * @param {string} path under /api/v1
 * @param {Record<string, string>} query
 * @returns {Promise<string>} the file name it was saved as
 */
export async function download(path, query) {
  const url = new URL(`/api/v1${path}`, location.origin)
  for (const [name, value] of Object.entries(query)) if (value !== "") url.searchParams.set(name, value)
  let response
  try {
    response = await fetch(url, { headers: credentials("GET", auth.key() ?? undefined) })
  } catch {
    throw new ApiError("The service cannot be reached. Check your connection and try again.", 0, "network")
  }
  if (!response.ok) {
    const body = await response.json().catch(() => null)
    throw new ApiError(body?.error ?? `The request failed (${response.status}).`, response.status, body?.code ?? "error")
  }
  const name = /filename="([^"]+)"/.exec(response.headers.get("content-disposition") ?? "")?.[1] ?? "export"
  const href = URL.createObjectURL(await response.blob())
  const link = document.createElement("a")
  link.href = href
  link.download = name
  document.body.append(link)
  link.click()
  link.remove()
  // The click has handed the file over; the browser keeps its own copy.
  setTimeout(() => URL.revokeObjectURL(href), 60_000)
  return name
}
