// Hash routing (#/sessions?user_id=…): the server serves one page, and a page's filters and
// position are in the URL, so reload, back and a shared link all land where the user was.
import { useEffect, useState } from "preact/hooks"

/** @typedef {{ path: string, query: Record<string, string> }} Route */

/** @returns {Route} */
export const currentRoute = () => {
  const hash = location.hash.replace(/^#/, "") || "/overview"
  const [path = "/overview", search = ""] = hash.split("?", 2)
  return { path, query: Object.fromEntries(new URLSearchParams(search)) }
}

/** @param {string} path @param {Record<string, unknown>} [query] */
export const hrefOf = (path, query = {}) => {
  const params = new URLSearchParams()
  for (const [k, v] of Object.entries(query)) if (v !== undefined && v !== null && v !== "") params.set(k, String(v))
  const search = params.toString()
  return `#${path}${search ? `?${search}` : ""}`
}

/** @param {string} path @param {Record<string, unknown>} [query] */
export const navigate = (path, query) => {
  location.hash = hrefOf(path, query)
}

export const useRoute = () => {
  const [route, setRoute] = useState(currentRoute)
  useEffect(() => {
    const update = () => setRoute(currentRoute())
    addEventListener("hashchange", update)
    // Effects run after paint: a change between the first render and this listener (a click
    // right after sign-in) would otherwise be missed until the next one.
    update()
    return () => removeEventListener("hashchange", update)
  }, [])
  return route
}
