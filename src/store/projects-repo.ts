import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { IdPrefix, makeId } from "../domain/ids.ts"
import { type Page, toPage } from "../domain/pagination.ts"
import { type NameTaken, type Project, ProjectNotFound } from "../domain/tenancy.ts"
import { isoNN, type PageRequest, pageAfter, uniqueAsTaken } from "./tenancy-sql.ts"

/** An org's projects: names that signals are counted under. */
export interface Projects {
  readonly createProject: (orgId: string, input: { readonly name: string }) => Effect.Effect<Project, NameTaken>
  readonly listProjects: (orgId: string, page: PageRequest) => Effect.Effect<Page<Project>>
  readonly deleteProject: (orgId: string, projectId: string) => Effect.Effect<void, ProjectNotFound>
}

interface ProjectRow {
  readonly id: string
  readonly name: string
  readonly created_at: Date
}
const toProject = (r: ProjectRow): Project => ({ ...r, created_at: isoNN(r.created_at) })

export const makeProjects = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const deleteProject = Effect.fn("Tenancy.deleteProject")(function*(orgId: string, projectId: string) {
    const rows = yield* sql`DELETE FROM projects WHERE org_id = ${orgId} AND id = ${projectId} RETURNING id`.pipe(Effect.orDie)
    if (rows.length === 0) return yield* new ProjectNotFound(projectId)
  })

  const createProject = Effect.fn("Tenancy.createProject")(function*(orgId: string, input: { readonly name: string }) {
    const rows = yield* sql<ProjectRow>`INSERT INTO projects (id, org_id, name)
      VALUES (${makeId(IdPrefix.project)}, ${orgId}, ${input.name}) RETURNING id, name, created_at`.pipe(
      uniqueAsTaken(`a project named ${input.name}`)
    )
    return toProject(rows[0]!)
  })

  const listProjects = Effect.fn("Tenancy.listProjects")(function*(orgId: string, page: PageRequest) {
    const rows = yield* sql<ProjectRow>`SELECT id, name, created_at FROM projects
      WHERE org_id = ${orgId} ${pageAfter(sql, page.cursor)} ORDER BY id DESC LIMIT ${page.limit + 1}`.pipe(Effect.orDie)
    return toPage(rows.map(toProject), page.limit, (p) => p.id)
  })

  return { createProject, listProjects, deleteProject } satisfies Projects
})
