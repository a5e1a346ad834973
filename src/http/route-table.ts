/**
 * Which methods each path of the served APIs accepts. The router reports a wrong method as
 * "not found"; this table lets the gateway answer 405 with an Allow header instead.
 */
export interface RouteTable {
  readonly methodsFor: (path: string) => ReadonlyArray<string>
  /**
   * The route a request's path matches, as its template (`/api/v1/rules/:id`), for metrics whose
   * labels must stay few: "unmatched" when no route has the path.
   */
  readonly templateOf: (method: string, path: string) => string
}

/** The part of an HttpApi this table reads. */
interface ApiShape {
  readonly groups: Record<string, { readonly endpoints: Record<string, { readonly method: string; readonly path: string }> }>
}

interface Route {
  readonly method: string
  readonly path: string
  readonly pattern: RegExp
}

const toPattern = (path: string): RegExp =>
  new RegExp(`^${path.split("/").map((seg) => (seg.startsWith(":") ? "[^/]+" : seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))).join("/")}/?$`)

export const makeRouteTable = (
  apis: ReadonlyArray<ApiShape>,
  extra: ReadonlyArray<{ readonly method: string; readonly path: string }>
): RouteTable => {
  const routes: Array<Route> = extra.map((r) => ({ method: r.method, path: r.path, pattern: toPattern(r.path) }))
  for (const api of apis) {
    for (const group of Object.values(api.groups)) {
      for (const endpoint of Object.values(group.endpoints)) {
        routes.push({ method: endpoint.method, path: endpoint.path, pattern: toPattern(endpoint.path) })
      }
    }
  }
  // Literal paths first, so `/api/v1/users/me` is not taken for `/api/v1/users/:id`.
  const byMethod = new Map<string, Array<Route>>()
  for (const route of [...routes].sort((a, b) => Number(a.path.includes(":")) - Number(b.path.includes(":")))) {
    byMethod.set(route.method, [...(byMethod.get(route.method) ?? []), route])
  }
  return {
    methodsFor: (path) => [...new Set(routes.filter((r) => r.pattern.test(path)).map((r) => r.method))].sort(),
    templateOf: (method, path) =>
      (byMethod.get(method === "HEAD" ? "GET" : method) ?? []).find((r) => r.pattern.test(path))?.path ??
        routes.find((r) => r.pattern.test(path))?.path ??
        "unmatched"
  }
}
