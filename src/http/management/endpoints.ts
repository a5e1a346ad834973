import { Context, Schema } from "effect"
import type { HttpRouter } from "effect/http"
import { HttpApiEndpoint, type HttpApiGroup, OpenApi } from "effect/http-api"
import { NotFound } from "../../domain/errors.ts"
import type { Access, Resource } from "../../domain/scopes.ts"
import { rolesFor, visibilityFor } from "../../domain/roles.ts"
import { AuditTrail } from "../audit-trail.ts"
import { Envelope, ManagementAuth, PageQuery, pageOf, RequiredScope } from "../contract.ts"

/**
 * The pieces every management group declares alike: its middleware, its endpoints' scopes, and
 * the shapes of its list and read endpoints. The OpenAPI document is the same as when each group
 * spelled them out.
 */

/** The `:id` of a path that names one resource. */
export const IdParams = { id: Schema.String }

/** A resource's name as people give it: 1 to 200 characters. */
export const Name = Schema.String.pipe(Schema.check(Schema.isMinLength(1), Schema.isMaxLength(200)))

/**
 * An endpoint's annotations: the scope it needs and, when worth saying, what it does (its
 * description in the document). For `annotateMerge`.
 */
export const requires = (resource: Resource, access: Access, description?: string) => {
  const scope = Context.make(RequiredScope, { resource, access })
  return description === undefined ? scope : Context.merge(scope, OpenApi.annotations({ description }))
}

/** GET `path`: a page of `item`s, paged by id (PageQuery), with `filters` as further query parameters. */
export const listEndpoint = <
  const Path extends HttpRouter.PathInput,
  S extends Schema.Top,
  const Filters extends Schema.Struct.Fields = {}
>(path: Path, item: S, filters?: Filters) =>
  // TypeScript drops the fields of an optional generic spread; they are there.
  HttpApiEndpoint.get("list", path, { query: { ...PageQuery, ...filters } as typeof PageQuery & Filters, success: pageOf(item) })

/** GET `path` (ending in `/:id`): one `item`, or 404. */
export const getEndpoint = <const Path extends HttpRouter.PathInput, S extends Schema.Top>(path: Path, item: S) =>
  HttpApiEndpoint.get("get", path, { params: IdParams, success: item, error: NotFound })

/**
 * A management group: authenticated by API key, its writes audited (innermost, so the entry
 * commits with the write and before the caches are dropped), its errors in the envelope, its
 * title and description in the document.
 */
export const managementGroup =
  (doc: { readonly title: string; readonly description?: string }) =>
  <Id extends string, Endpoints extends HttpApiEndpoint.Constraint>(group: HttpApiGroup.HttpApiGroup<Id, Endpoints>) =>
    group.middleware(AuditTrail).middleware(ManagementAuth).middleware(Envelope).annotateMerge(OpenApi.annotations(doc))

/**
 * Names in the document, on each management operation, the roles of signed-in people that may call
 * it (`x-roles`, from src/domain/roles.ts), with what each sees where it is less than the org, also
 * said in the operation's description. API keys need the operation's scope instead.
 */
export const documentRoles = (spec: Record<string, any>): Record<string, any> => {
  for (const pathItem of Object.values(spec.paths ?? {}) as Array<Record<string, any>>) {
    for (const op of Object.values(pathItem)) {
      if (typeof op !== "object" || op === null || typeof op.operationId !== "string") continue
      const roles = rolesFor(op.operationId)
      const narrowed = roles.flatMap((role) => {
        const seen = visibilityFor(op.operationId, role)
        return seen === "org" ? [] : [`${role}: ${seen === "own" ? "their own activity only" : "the teams they lead"}`]
      })
      op["x-roles"] = roles
      const note = `Roles (signed-in people): ${roles.join(", ")}${narrowed.length > 0 ? ` (${narrowed.join("; ")})` : ""}.`
      op.description = op.description === undefined ? note : `${op.description}\n\n${note}`
    }
  }
  return spec
}
