
/**
 * Which methods each path of the served APIs accepts. The router reports a wrong method as
 * "not found"; this table lets the gateway answer 405 with an Allow header instead.
 */
export interface RouteTable {
  readonly methodsFor: (path: string) => ReadonlyArray<string>
}

/** The part of an HttpApi this table reads. */
interface ApiShape {
  readonly groups: Record<string, { readonly endpoints: Record<string, { readonly method: string; readonly path: string }> }>
}

interface Route {
  readonly method: string
  readonly pattern: RegExp
}

const toPattern = (path: string): RegExp =>
  new RegExp(`^${path.split("/").map((seg) => (seg.startsWith(":") ? "[^/]+" : seg.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))).join("/")}/?$`)

export const makeRouteTable = (
  apis: ReadonlyArray<ApiShape>,
  extra: ReadonlyArray<{ readonly method: string; readonly path: string }>
): RouteTable => {
  const routes: Array<Route> = extra.map((r) => ({ method: r.method, pattern: toPattern(r.path) }))
  for (const api of apis) {
    for (const group of Object.values(api.groups)) {
      for (const endpoint of Object.values(group.endpoints)) {
        routes.push({ method: endpoint.method, pattern: toPattern(endpoint.path) })
      }
    }
  }
  return {
    methodsFor: (path) => [...new Set(routes.filter((r) => r.pattern.test(path)).map((r) => r.method))].sort()
  }
}
