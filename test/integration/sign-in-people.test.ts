import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { beforeAll, describe, expect, it } from "vitest"
import { personForSignIn } from "../../src/store/sign-in-people.ts"
import type { Bootstrapped } from "../../src/store/tenancy-repo.ts"
import { bootstrapOrg, freshDatabase, withStore } from "../support/harness.ts"

let databaseUrl: string
let org: Bootstrapped
let other: Bootstrapped

beforeAll(async () => {
  databaseUrl = await freshDatabase()
  org = await bootstrapOrg(databaseUrl, "sign-in", "team")
  other = await bootstrapOrg(databaseUrl, "sign-in-other", "team")
  await withStore(
    databaseUrl,
    Effect.flatMap(SqlClient.SqlClient, (sql) =>
      sql`INSERT INTO users (id, org_id, email, name, role) VALUES
      ('user_ada', ${org.org_id}, 'Ada@Example.com', 'Ada', 'admin'),
      ('user_gone', ${org.org_id}, 'gone@example.com', 'Gone', 'member')`.pipe(
        Effect.andThen(sql`UPDATE users SET deactivated_at = now() WHERE id = 'user_gone'`),
        Effect.orDie
      ))
  )
})

const signIn = (email: string, createUsers: boolean, orgId = org.org_id) =>
  withStore(databaseUrl, personForSignIn({ orgId, email, name: "Signed In", createUsers }))

describe("who a person signing in is", () => {
  it("the org's user of the same e-mail, in any letter case, with their role", async () => {
    expect(await signIn("ada@EXAMPLE.com", false)).toEqual({ userId: "user_ada", role: "admin", created: false })
  })

  it("no user of that e-mail: refused, unless the org creates users; then a member, once", async () => {
    expect(await signIn("new@example.com", false)).toEqual({ refused: "no_such_user" })
    const created = await signIn("New@example.com", true)
    expect(created).toMatchObject({ role: "member", created: true, userId: expect.stringMatching(/^user_/) })
    expect(await signIn("new@example.com", true)).toEqual({ ...created, created: false })
  })

  it("two first sign-ins at once make one user", async () => {
    const [a, b] = await Promise.all([signIn("twice@example.com", true), signIn("twice@example.com", true)])
    expect("userId" in a && "userId" in b && a.userId === b.userId).toBe(true)
  })

  it("a deactivated user is refused, not re-created", async () => {
    expect(await signIn("gone@example.com", true)).toEqual({ refused: "user_deactivated" })
  })

  it("another org's user is not matched", async () => {
    expect(await signIn("ada@example.com", false, other.org_id)).toEqual({ refused: "no_such_user" })
  })
})
