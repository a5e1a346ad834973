import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import type { Bootstrapped } from "../../src/store/tenancy-repo.ts"
import { bootstrapOrg, call, startServer, type TestServer, withStore } from "../support/harness.ts"
import { logVariants } from "../support/log-variants.ts"
import { waitFor } from "../support/wait.ts"

describe.each(logVariants())("goals over %s", (_name, logEnv) => {
  let server: TestServer
  let org: Bootstrapped

  beforeAll(async () => {
    server = await startServer({ env: logEnv() })
    org = await bootstrapOrg(server.databaseUrl, "goals", "team")
  })
  afterAll(() => server?.stop())

  const goals = (method: string, path: string, body?: unknown, key = org.license_key) =>
    call(server, method, `/engine/v1${path}`, { key, ...(body !== undefined ? { body } : {}) })

  /** Another user of the org, with a license key of its own. */
  const anotherUser = async () => {
    const user = await call(server, "POST", "/api/v1/users", { key: org.api_key_live!, body: { email: `g${Math.random()}@goals.test`, name: "G" } })
    const license = await call(server, "POST", "/api/v1/license-keys", { key: org.api_key_live!, body: { user_id: user.body.id } })
    return license.body.key as string
  }

  it("creates a goal, lists the active ones, and moves it through its states", async () => {
    const created = await goals("POST", "/goals", { description: "Fix the login bug in the auth service", adapter: "claude-code" })
    expect(created.status).toBe(201)
    expect(created.body.goal).toEqual({
      id: expect.stringMatching(/^goal_[0-9a-f]{32}$/),
      description: "Fix the login bug in the auth service",
      status: "active",
      adapter: "claude-code",
      created_at: expect.any(String)
    })
    const id = created.body.goal.id
    expect((await goals("GET", "/goals")).body.goals).toContainEqual(created.body.goal)

    const done = await goals("PATCH", `/goals/${id}`, { status: "completed" })
    expect(done.status).toBe(200)
    expect(done.body.goal).toMatchObject({ id, status: "completed", description: "Fix the login bug in the auth service" })
    expect(Date.parse(done.body.goal.updated_at)).toBeGreaterThanOrEqual(Date.parse(created.body.goal.created_at))
    expect((await goals("GET", "/goals")).body.goals.map((g: { id: string }) => g.id)).not.toContain(id)

    const sideways = await goals("PATCH", `/goals/${id}`, { status: "abandoned" })
    // The engine API has no 422 (spec §7): a transition the goal's state does not allow conflicts with it.
    expect(sideways.status).toBe(409)
    expect(sideways.body).toMatchObject({ code: "invalid_transition", status: 409, request_id: expect.stringMatching(/^req_/) })

    const reopened = await goals("PATCH", `/goals/${id}`, { status: "active", description: "Fix the login bug, SSO included" })
    expect(reopened.body.goal).toMatchObject({ id, status: "active", description: "Fix the login bug, SSO included" })
    expect((await goals("GET", "/goals")).body.goals).toContainEqual(reopened.body.goal)
    expect((await goals("PATCH", `/goals/${id}`, { status: "active" })).status).toBe(409)
    expect((await goals("PATCH", `/goals/${id}`, { status: "abandoned" })).body.goal.status).toBe("abandoned")
  })

  it("lists a page of the active goals (20 unless limit says up to 100); a user has at most 100 active ones", async () => {
    const key = await anotherUser()
    const ids: Array<string> = []
    for (let i = 0; i < 100; i++) {
      const created = await goals("POST", "/goals", { description: `goal number ${i}` }, key)
      expect(created.status).toBe(201)
      ids.push(created.body.goal.id)
    }
    const refused = await goals("POST", "/goals", { description: "one too many" }, key)
    expect(refused.status).toBe(409)
    expect(refused.body).toMatchObject({ code: "too_many_goals", status: 409 })
    const list = async (query: string) => (await goals("GET", `/goals${query}`, undefined, key)).body.goals.map((g: { id: string }) => g.id)
    expect(await list("")).toEqual(ids.slice(0, 20))
    expect(await list("?limit=5")).toEqual(ids.slice(0, 5))
    expect(await list("?limit=100")).toEqual(ids)
    expect((await goals("GET", "/goals?limit=101", undefined, key)).body).toMatchObject({ code: "invalid_parameters", status: 400 })
    // Closing one makes room; reopening it while full is refused the same way.
    expect((await goals("PATCH", `/goals/${ids[0]}`, { status: "completed" }, key)).status).toBe(200)
    const another = await goals("POST", "/goals", { description: "now there is room" }, key)
    expect(another.status).toBe(201)
    const reopened = await goals("PATCH", `/goals/${ids[0]}`, { status: "active" }, key)
    expect(reopened.status).toBe(409)
    expect(reopened.body.code).toBe("too_many_goals")
    expect(await list("?limit=100")).toEqual([...ids.slice(1), another.body.goal.id])
  })

  it("answers a goal's create and a description-only change without an adapter", async () => {
    const created = await goals("POST", "/goals", { description: "Write the migration guide" })
    expect(created.body.goal.adapter).toBeNull()
    const renamed = await goals("PATCH", `/goals/${created.body.goal.id}`, { description: "Write the v2 migration guide" })
    expect(renamed.body.goal).toMatchObject({ status: "active", description: "Write the v2 migration guide", updated_at: expect.any(String) })
  })

  it("refuses bad input with the error envelope", async () => {
    const created = await goals("POST", "/goals", { description: "Refactor billing" })
    const id = created.body.goal.id
    const cases: ReadonlyArray<readonly [string, string, unknown, number, string]> = [
      ["POST", "/goals", {}, 400, "invalid_parameters"],
      ["POST", "/goals", { description: 42 }, 400, "invalid_parameters"],
      ["POST", "/goals", { description: "x", owner: "me" }, 400, "invalid_parameters"],
      ["POST", "/goals", { description: "   " }, 400, "invalid_parameters"],
      ["POST", "/goals", { description: "x".repeat(2001) }, 400, "invalid_parameters"],
      ["POST", "/goals", { description: "fix \u0000" }, 400, "invalid_parameters"],
      ["POST", "/goals", { description: "fix it", adapter: "" }, 400, "invalid_parameters"],
      ["POST", "/goals", { description: "fix it", adapter: "a\ud800" }, 400, "invalid_parameters"],
      ["PATCH", `/goals/${id}`, {}, 400, "invalid_parameters"],
      ["PATCH", `/goals/${id}`, { status: "done" }, 400, "invalid_parameters"],
      ["PATCH", `/goals/${id}`, { description: "" }, 400, "invalid_parameters"],
      ["PATCH", `/goals/${id}`, { description: "x\u0000" }, 400, "invalid_parameters"],
      ["PATCH", "/goals/goal_unknown", { status: "completed" }, 404, "not_found"]
    ]
    for (const [method, path, body, status, code] of cases) {
      const res = await goals(method, path, body)
      expect({ method, path, body, status: res.status, code: res.body.code }).toEqual({ method, path, body, status, code })
      expect(res.body).toMatchObject({ status, error: expect.any(String), request_id: expect.stringMatching(/^req_/) })
    }
    expect((await goals("GET", "/goals")).body.goals.map((g: { id: string }) => g.id)).toContain(id)
  })

  it("keeps each user's goals their own", async () => {
    const created = await goals("POST", "/goals", { description: "Mine alone" })
    const other = await anotherUser()
    expect((await goals("GET", "/goals", undefined, other)).body.goals).toEqual([])
    const res = await goals("PATCH", `/goals/${created.body.goal.id}`, { status: "completed" }, other)
    expect(res.status).toBe(404)
    expect((await goals("GET", "/goals")).body.goals.map((g: { id: string }) => g.id)).toContain(created.body.goal.id)
  })

  it("is a feature of the Developer plan and above", async () => {
    const lite = await bootstrapOrg(server.databaseUrl, "goals-lite", "lite")
    const res = await goals("GET", "/goals", undefined, lite.license_key)
    expect(res.status).toBe(403)
    expect(res.body.error).toContain("developer")
  })

  it("detects drift from the active goals: after three off-goal prompts a goal-drift signal joins the session", async () => {
    const user = await anotherUser()
    const goal = (await goals("POST", "/goals", { description: "Fix the login bug in the authentication service" }, user)).body.goal
    const prompt = (text: string, type = "user-prompt") =>
      goals("POST", "/signals", { type, adapter: "cursor", session_id: "drift", metadata: { prompt: text } }, user).then((r) => r.body)
    const first = await prompt("why does sign-in fail for sso users with a unicode password")
    const offGoal = ["write a haiku about autumn", "what is the capital of peru", "recommend some jazz records"]
    const answers = []
    for (const text of offGoal) answers.push(await prompt(text))
    // The prompt that completes the streak is answered with the drift, for the adapter to show the person.
    expect(first.drift).toBeUndefined()
    expect(answers.slice(0, 2).map((a) => a.drift)).toEqual([undefined, undefined])
    expect(answers[2]).toMatchObject({ ok: true, signal_id: expect.any(String) })
    const drifted = async (count: number) =>
      (await waitFor(
        async () => (await goals("GET", `/sessions/${first.session_id}`, undefined, user)).body,
        (b) => b.signals?.filter((s: { type: string }) => s.type === "goal-drift").length === count,
        { timeoutMs: 5_000, what: `goal-drift signal ${count}` }
      )).signals
    const signals = await drifted(1)
    const prompts = signals.filter((s: { type: string }) => s.type === "user-prompt")
    // Which goal, since when, on what evidence: the off-goal prompts, the first one's time.
    expect(signals.find((s: { type: string }) => s.type === "goal-drift").metadata).toEqual({
      goal_id: goal.id,
      goal_description: "Fix the login bug in the authentication service",
      since: prompts[1].timestamp,
      score: 0,
      off_goal_prompts: 3,
      evidence: prompts.slice(1).map((p: { id: string; metadata: { prompt: string } }) => ({ signal_id: p.id, prompt: p.metadata.prompt })),
      prompt_signal_id: prompts[3].id,
      method: "context-7",
      source: "engine"
    })
    expect(answers[2].drift).toEqual({
      goal_id: goal.id,
      goal: "Fix the login bug in the authentication service",
      since: prompts[1].timestamp,
      off_goal_prompts: 3,
      prompts: offGoal
    })
    // The user answers it: a refocus-ack starts the streak over, so two more off-goal prompts are no drift...
    await prompt("", "refocus-ack")
    for (const text of offGoal.slice(0, 2)) await prompt(text)
    // ...nor after a goal update, which answers it too; three in a row after it are.
    expect((await goals("PATCH", `/goals/${goal.id}`, { description: "Fix the login bug in the authentication service (SSO)" }, user)).status).toBe(200)
    for (const text of offGoal) await prompt(text)
    const after = await drifted(2)
    const second = after.filter((s: { type: string }) => s.type === "goal-drift")[1]
    expect(second.metadata.evidence.map((e: { prompt: string }) => e.prompt)).toEqual(offGoal)
  })

  it("makes a drift after the org's own number of off-goal prompts (PATCH /org drift_prompts), none at 0", async () => {
    const own = await bootstrapOrg(server.databaseUrl, `goals-streak-${Math.random()}`, "team")
    const setStreak = async (drift_prompts: number | null) =>
      expect((await call(server, "PATCH", "/api/v1/org", { key: own.api_key_live!, body: { drift_prompts } })).status).toBe(200)
    await goals("POST", "/goals", { description: "Fix the login bug in the authentication service" }, own.license_key)
    const offGoal = ["write a haiku about autumn", "what is the capital of peru", "recommend some jazz records", "plan a weekend in lisbon"]
    /** Which of the off-goal prompts, in a session of their own, were answered with a drift. */
    const drifted = async (session: string) => {
      const answers = []
      for (const prompt of offGoal) {
        answers.push(
          (await goals("POST", "/signals", { type: "user-prompt", adapter: "cursor", session_id: session, metadata: { prompt } }, own.license_key)).body
        )
      }
      return answers.map((a) => a.drift?.off_goal_prompts ?? 0)
    }
    expect(await drifted("deployment")).toEqual([0, 0, 3, 0])
    await setStreak(2)
    expect(await drifted("two")).toEqual([0, 2, 0, 0])
    await setStreak(0)
    expect(await drifted("none")).toEqual([0, 0, 0, 0])
    await setStreak(null)
    expect(await drifted("default-again")).toEqual([0, 0, 3, 0])
  })

  // The goal's work, in words the goal does not have: its first three prompts drift.
  const totpWork = ["generate a secret and return an otpauth:// url for the qr code", "store the secret encrypted with the existing kms helper",
    "10 recovery codes, hashed, shown once"]
  const totpMore = ["render the qr code on the settings page", "recovery codes should be single use", "rotate the kms key of the stored secrets"]
  /** A new user with the two-factor goal, and a sender of signals into one session of theirs. */
  const totpUser = async (session: string) => {
    const user = await anotherUser()
    await goals("POST", "/goals", { description: "Add two-factor authentication to the admin console" }, user)
    const send = (type: string, metadata: Record<string, unknown>) =>
      goals("POST", "/signals", { type, adapter: "claude-code", session_id: session, metadata }, user).then((r) => r.body)
    const prompts = async (texts: ReadonlyArray<string>) => {
      const answers = []
      for (const prompt of texts) answers.push(await send("user-prompt", { prompt }))
      return answers
    }
    return { user, send, prompts }
  }

  it("takes a drift answered as the goal's work (refocus-ack with on_goal) as the goal's words from then on", async () => {
    const { user, send, prompts } = await totpUser("totp")
    const answers = await prompts(totpWork)
    expect(answers.map((a) => a.drift !== undefined)).toEqual([false, false, true])
    expect((await send("refocus-ack", { on_goal: true })).ok).toBe(true)
    expect((await prompts(totpMore)).map((a) => a.drift)).toEqual([undefined, undefined, undefined])
    const timeline = (await goals("GET", `/sessions/${answers[0].session_id}`, undefined, user)).body.signals
    expect(timeline.filter((s: { type: string }) => s.type === "refocus-ack").map((s: { metadata: unknown }) => s.metadata)).toEqual([{ on_goal: true }])
  })

  it("takes the prompts a late answer names (refocus-ack with on_goal and prompts) as the goal's words", async () => {
    const { send, prompts } = await totpUser("totp-late")
    const told = (await prompts(totpWork))[2].drift.prompts
    expect(told).toEqual(totpWork.map((p) => p.slice(0, 60)))
    // The session is back on the goal's own words before the person answers: only the named prompts can teach.
    await send("user-prompt", { prompt: "the admin console login asks for the two-factor authentication code now" })
    expect((await send("refocus-ack", { on_goal: true, prompts: told })).ok).toBe(true)
    expect((await prompts(totpMore)).map((a) => a.drift)).toEqual([undefined, undefined, undefined])
  })

  it("takes the work done before a goal was set for its words when the goal is set for that work", async () => {
    // Without that work, the goal's words alone call these prompts off: a drift at the third.
    const { prompts: fresh } = await totpUser("totp-fresh")
    expect((await fresh(totpMore)).map((a) => a.drift !== undefined)).toEqual([false, false, true])
    const user = await anotherUser()
    const send = (prompt: string) =>
      goals("POST", "/signals", { type: "user-prompt", adapter: "claude-code", session_id: "late-goal", metadata: { prompt } }, user).then((r) => r.body)
    // No goal yet: nothing is judged, the words are kept.
    for (const prompt of ["the admin console needs a second factor at sign-in", ...totpWork]) expect((await send(prompt)).drift).toBeUndefined()
    expect((await goals("POST", "/goals", { description: "Add two-factor authentication to the admin console" }, user)).status).toBe(201)
    const answers = []
    for (const prompt of totpMore) answers.push(await send(prompt))
    expect(answers.map((a) => a.drift)).toEqual([undefined, undefined, undefined])
  })

  it("judges drift per session: a second agent working on the goal meanwhile neither resets it nor lends it evidence", async () => {
    const user = await anotherUser()
    await goals("POST", "/goals", { description: "Fix the login bug in the authentication service" }, user)
    const prompt = (session: string, text: string) =>
      goals("POST", "/signals", { type: "user-prompt", adapter: "claude-code", session_id: session, metadata: { prompt: text } }, user)
        .then((r) => r.body)
    const onGoal = ["why does sign-in fail for sso users with a unicode password", "normalize the password before hashing in the login handler",
      "add a login test with an emoji password", "the sign-in test still fails, check the password hashing"]
    const offGoal = ["write a haiku about autumn", "what is the capital of peru", "recommend some jazz records"]
    const a = await prompt("agent-a", onGoal[0]!)
    const b = await prompt("agent-b", onGoal[1]!)
    const off: Array<string> = []
    for (const [i, text] of offGoal.entries()) {
      await prompt("agent-a", onGoal[i + 1]!)
      off.push((await prompt("agent-b", text)).signal_id)
    }
    const timeline = (session: string) => goals("GET", `/sessions/${session}`, undefined, user).then((r) => r.body.signals)
    const inB = (await waitFor(() => timeline(b.session_id), (s) => s?.some((x: { type: string }) => x.type === "goal-drift"), {
      timeoutMs: 5_000,
      what: "goal-drift in agent-b's session"
    })).filter((s: { type: string }) => s.type === "goal-drift")
    expect(inB).toHaveLength(1)
    expect(inB[0].metadata.evidence).toEqual(offGoal.map((text, i) => ({ signal_id: off[i], prompt: text })))
    expect((await timeline(a.session_id)).filter((s: { type: string }) => s.type === "goal-drift")).toEqual([])
  })

  it("records a token spike as anomaly.detected against the user's baseline", async () => {
    const user = await anotherUser()
    let last: any
    for (const tokens of [100, 110, 90, 100, 100, 1000]) {
      last = (await goals("POST", "/signals", { type: "post-tool", adapter: "cursor", session_id: "spike", metadata: { tokens_in: tokens } }, user)).body
    }
    // Outbox rows are committed behind the verdicts; a management request first waits for them.
    await call(server, "GET", "/api/v1/rules?limit=1", { key: org.api_key_live! })
    const anomalies = await withStore(
      server.databaseUrl,
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql<{ readonly payload: any }>`
        SELECT payload FROM webhook_events WHERE org_id = ${org.org_id} AND type = 'anomaly.detected'
          AND payload->'data'->>'session_id' = ${last.session_id}`
      })
    )
    expect(anomalies.map((a) => a.payload.data)).toEqual([{
      anomaly_type: "token_spike",
      user_id: expect.stringMatching(/^user_/),
      baseline_avg: 100,
      observed: 1000,
      deviation_pct: 900,
      session_id: last.session_id
    }])
  })

  it("below the plans that have them, drift and anomalies are derived but not acted on", async () => {
    // Developer: goals yes, goal drift (Professional) and anomalies (Team) no.
    const dev = await bootstrapOrg(server.databaseUrl, "goals-dev", "developer")
    const key = dev.license_key
    expect((await goals("POST", "/goals", { description: "Fix the login bug in the authentication service" }, key)).status).toBe(201)
    const send = (metadata: Record<string, unknown>, type = "user-prompt") =>
      goals("POST", "/signals", { type, adapter: "cursor", session_id: "dev", metadata }, key).then((r) => r.body)
    const first = await send({ prompt: "write a haiku about autumn", tokens_in: 100 })
    const answers = []
    for (const tokens of [100, 100, 100, 100]) answers.push(await send({ prompt: "what is the capital of peru", tokens_in: tokens }))
    await send({ prompt: "recommend some jazz records", tokens_in: 5000 })
    // Nor told to the adapter (the third off-goal prompt is answered with the drift on the plans that have it).
    expect(answers.map((a) => a.drift)).toEqual([undefined, undefined, undefined, undefined])
    expect(answers[1]).toMatchObject({ ok: true })
    // Checks that something does not happen, so it waits: a drift signal would be appended right
    // after its batch and projected a batch later (the drift test above sees it well within 1 s).
    await new Promise((r) => setTimeout(r, 1_000))
    await send({}, "post-tool")
    const session = (await goals("GET", `/sessions/${first.session_id}`, undefined, key)).body
    expect(session.signals.map((s: { type: string }) => s.type)).not.toContain("goal-drift")
    const anomalies = await withStore(
      server.databaseUrl,
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        return yield* sql`SELECT 1 FROM webhook_events WHERE org_id = ${dev.org_id} AND type = 'anomaly.detected'`
      })
    )
    expect(anomalies).toEqual([])
  })
})
