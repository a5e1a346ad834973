import { Schema } from "effect"

/** API key scopes: read and write per management resource. `write` implies `read`. */
export const Resource = Schema.Literals(["rules", "sessions", "events", "webhooks", "admin"])
export type Resource = typeof Resource.Type

const accesses = ["read", "write"] as const
export type Access = typeof accesses[number]

/** Every resource's read and write, in the order of the resources (the documents list them so). */
export const Scope = Schema.Literals(Resource.literals.flatMap((resource) => accesses.map((access) => `${resource}:${access}` as const)))
export type Scope = typeof Scope.Type

export const allScopes: ReadonlyArray<Scope> = Scope.literals

export const requiredScope = (resource: Resource, access: Access): Scope => `${resource}:${access}`

export const hasScope = (granted: ReadonlyArray<Scope>, resource: Resource, access: Access): boolean =>
  granted.includes(requiredScope(resource, access)) ||
  (access === "read" && granted.includes(requiredScope(resource, "write")))

/** Whether the granted scopes include this one (its own, or its resource's write for a read). */
export const holdsScope = (granted: ReadonlyArray<Scope>, scope: Scope): boolean => {
  const [resource, access] = scope.split(":") as [Resource, Access]
  return hasScope(granted, resource, access)
}

/** Parses a comma-separated scope list as given on the command line; `all` expands to every scope. */
export const parseScopes = (input: string): ReadonlyArray<Scope> | string => {
  const parts = input.split(",").map((s) => s.trim()).filter((s) => s.length > 0)
  if (parts.includes("all")) return allScopes
  const unknown = parts.filter((p) => !(allScopes as ReadonlyArray<string>).includes(p))
  if (unknown.length > 0) return `unknown scope(s): ${unknown.join(", ")}; expected ${allScopes.join(", ")} or all`
  if (parts.length === 0) return "at least one scope is required"
  return [...new Set(parts)] as ReadonlyArray<Scope>
}
