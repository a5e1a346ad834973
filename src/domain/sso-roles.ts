import type { Role } from "./tenancy.ts"

/** One entry of an org's group → role mapping (its SSO settings' `group_roles`). */
export interface GroupRole {
  readonly group: string
  readonly role: Role
}

/**
 * The role a person's groups give them: that of the first entry of the mapping (in the order the
 * admin wrote it, so the more powerful group can be put first) whose group they are in; undefined
 * when they are in none, and then their user's role is left as it is.
 */
export const roleForGroups = (mapping: ReadonlyArray<GroupRole>, groups: ReadonlyArray<string>): Role | undefined => {
  const theirs = new Set(groups)
  return mapping.find((m) => theirs.has(m.group))?.role
}
