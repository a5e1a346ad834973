// The one way the dashboard reaches the service: the public management API, with the key the
// user signed in with. The key lives in sessionStorage only, so it goes when the tab closes.

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

export const auth = {
  /** @returns {string | null} */
  key: () => sessionStorage.getItem(keyItem),
  /** @param {string} key */
  signIn(key) {
    sessionStorage.setItem(keyItem, key)
    sessionStorage.removeItem(messageItem)
  },
  /** @param {string} [message] why the user is back at sign-in */
  signOut(message) {
    sessionStorage.removeItem(keyItem)
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
 * @param {string} method
 * @param {string} path under /api/v1
 * @param {{ query?: Record<string, unknown>, body?: unknown, key?: string }} [options]
 * @returns {Promise<any>}
 */
export async function api(method, path, options = {}) {
  const key = options.key ?? auth.key() ?? ""
  const url = new URL(`/api/v1${path}`, location.origin)
  for (const [name, value] of Object.entries(options.query ?? {})) {
    if (value !== undefined && value !== null && value !== "") url.searchParams.set(name, String(value))
  }
  /** @type {Record<string, string>} */
  const headers = { authorization: `Bearer ${key}` }
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
      auth.signOut(`Your API key is no longer valid (${error.message}). Sign in with a current key.`)
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
    response = await fetch(url, { headers: { authorization: `Bearer ${auth.key() ?? ""}` } })
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
