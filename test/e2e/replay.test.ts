import { execFile, spawn } from "node:child_process"
import { join } from "node:path"
import { promisify } from "node:util"
import { Effect, Exit, Layer, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { Kafka, logLevel } from "kafkajs"
import { describe, expect, inject, it } from "vitest"
import { bootstrapOrg, call, freshDatabase, startServer, withStore } from "../support/harness.ts"
import { databaseFromUrl } from "../../src/store/database.ts"
import { holdForReplay } from "../../src/store/replay-lock.ts"
import { deleteKafkaRecords } from "../support/kafka-admin.ts"
import { childEnv, logVariants } from "../support/log-variants.ts"
import { freePort } from "../support/ports.ts"
import { waitFor } from "../support/wait.ts"

const run = promisify(execFile)
const bin = join(import.meta.dirname, "..", "..", "bin", "signal-engine.js")

/**
 * Every projection row, in a stable order, as plain JSON; all of it as of one moment (a commit of
 * the write-behind lands in every table at once, so a poll that reads the tables one after another
 * could see its events without its sessions).
 */
const snapshot = (databaseUrl: string) =>
  withStore(
    databaseUrl,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql.withTransaction(Effect.gen(function*() {
        yield* sql`SET TRANSACTION ISOLATION LEVEL REPEATABLE READ`
        const sessions = yield* sql`SELECT * FROM sessions ORDER BY id`
        const events = yield* sql`SELECT * FROM events ORDER BY id`
        const actors = yield* sql`SELECT user_id, partition, has_open_sessions, state FROM actor_state ORDER BY user_id`
        const goals = yield* sql`SELECT * FROM goals ORDER BY id`
        const scopeUsage = yield* sql`
        SELECT org_id, environment, scope, scope_id, window_key, partition, cost_usd, tokens_in, tokens_out
        FROM scope_usage ORDER BY org_id, environment, scope, scope_id, window_key, partition`
        return JSON.parse(JSON.stringify({ sessions, events, actors, goals, scopeUsage }, (_k, v) => (typeof v === "bigint" ? v.toString() : v)))
      }))
    })
  )

/**
 * A service run over `logEnv`: several users and adapters, explicit closes, sessions closed by
 * inactivity (through tick records), then new sessions. Answers the projections it left, with
 * the service stopped, and when its second phase began.
 */
const scenario = async (logEnv: () => Record<string, string>) => {
  const databaseUrl = await freshDatabase()
  const env = logEnv()
  const server = await startServer({ databaseUrl, env })
  const org = await bootstrapOrg(databaseUrl, "replay", "team")
  const setTimeout_ = (seconds: number) =>
    withStore(
      databaseUrl,
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        yield* sql`UPDATE orgs SET session_timeout_s = ${seconds} WHERE id = ${org.org_id}`
      })
    )
  const keys = [org.license_key]
  for (let i = 0; i < 3; i++) {
    const user = await call(server, "POST", "/api/v1/users", { key: org.api_key_live!, body: { email: `r${i}@replay.test`, name: `R${i}` } })
    keys.push((await call(server, "POST", "/api/v1/license-keys", { key: org.api_key_live!, body: { user_id: user.body.id } })).body.key)
  }
  const send = async (key: string, type: string, adapter: string, metadata: Record<string, unknown> = {}, run = 1) => {
    const res = await call(server, "POST", "/engine/v1/signals", { key, body: { type, adapter, session_id: `${adapter}-${run}`, metadata } })
    expect(res.status).toBe(200)
    return res
  }

  let accepted = 0
  // Goals, and a drift: a goal, then three off-goal prompts, make the engine append a goal-drift signal.
  const goal = (key: string, method: string, path: string, body: unknown) =>
    call(server, method, `/engine/v1${path}`, { key, body }).then((r) => {
      expect(r.status).toBeLessThan(300)
      return r.body.goal
    })
  await goal(keys[0]!, "POST", "/goals", { description: "Fix the login bug in the authentication service" })
  const done = await goal(keys[2]!, "POST", "/goals", { description: "Write the release notes", adapter: "cursor" })
  await goal(keys[2]!, "PATCH", `/goals/${done.id}`, { status: "completed" })
  for (const text of ["write a haiku about autumn", "what is the capital of peru", "recommend some jazz records"]) {
    await send(keys[0]!, "user-prompt", "claude-code", { prompt: text })
    accepted++
  }
  accepted++ // the goal-drift signal
  for (const [i, key] of keys.entries()) {
    for (let n = 0; n < 5; n++) {
      await send(key, n === 0 ? "session-start" : "post-tool", i % 2 ? "cursor" : "claude-code", {
        model: n % 2 ? "gpt-4o" : "claude-sonnet-4",
        tokens_in: 100 * n,
        tokens_out: 10 * n,
        ...(n === 3 ? { error_code: "rate_limited" } : {})
      })
      accepted++
    }
  }
  // A signal sent with an idempotency key, and its retry: one signal in the projections, two records in the log.
  const sendKeyed = async (key: string, idempotencyKey: string, adapter: string) => {
    const res = await call(server, "POST", "/engine/v1/signals", {
      key,
      body: { type: "post-tool", adapter, session_id: `${adapter}-1`, metadata: { model: "gpt-4o", tokens_in: 7, tokens_out: 3 } },
      headers: { "idempotency-key": idempotencyKey }
    })
    expect(res.status).toBe(200)
    return res.body
  }
  const keyed = await sendKeyed(keys[3]!, "replay-k1", "cursor")
  expect(await sendKeyed(keys[3]!, "replay-k1", "cursor")).toEqual({ ...keyed, duplicate: true })
  accepted++
  // A rule blocks a model; a keyed signal it blocked keeps its verdict for its retries (the log does not hold it).
  const rule = await call(server, "POST", "/api/v1/rules", {
    key: org.api_key_live!,
    body: {
      name: "no forbidden",
      type: "model_filter",
      scope: "org",
      scope_id: org.org_id,
      condition: { model: { in: ["forbidden-model"] } },
      action: "block",
      action_config: { message: "not that one" }
    }
  })
  expect(rule.status).toBe(201)
  // In force for the very next signal.
  accepted++
  expect((await send(keys[2]!, "post-tool", "claude-code", { model: "forbidden-model" })).body.ok).toBe(false)
  const blocked = { ok: false, action: "block", rule_id: rule.body.id, message: "not that one" }
  const sendBlocked = (idempotencyKey: string) =>
    call(server, "POST", "/engine/v1/signals", {
      key: keys[3]!,
      body: { type: "post-tool", adapter: "cursor", session_id: "cursor-1", metadata: { model: "forbidden-model" } },
      headers: { "idempotency-key": idempotencyKey }
    }).then((r) => r.body)
  expect(await sendBlocked("replay-b1")).toMatchObject(blocked)
  expect(await sendBlocked("replay-b1")).toMatchObject({ ...blocked, duplicate: true })
  accepted++
  await send(keys[1]!, "session-end", "cursor")
  accepted++
  // Now shorten the timeout; one more signal in each open session carries it, and those
  // sessions then end by inactivity (1 s), through tick records. Then new sessions start.
  await setTimeout_(1)
  for (const i of [0, 2, 3]) {
    await send(keys[i]!, "stop", i % 2 ? "cursor" : "claude-code")
    accepted++
  }
  await waitFor(
    () => call(server, "GET", "/api/v1/sessions?limit=100", { key: org.api_key_live! }),
    (r) => r.body.data.length === 4 && r.body.data.every((s: { status: string }) => s.status === "ended"),
    { what: "every session to end" }
  )
  // The sessions still open at the end must not time out while the service stops.
  await setTimeout_(1800)
  let phase2: string | undefined
  for (const key of keys) {
    const res = await send(key, "user-prompt", "codex", { prompt: "again" })
    phase2 ??= (await call(server, "GET", `/api/v1/events/evt_${res.body.signal_id.slice(4)}`, { key: org.api_key_live! })).body.ts
    accepted++
  }
  // A second run of the same tool by the first user, interleaved with the first: a session of its own.
  await send(keys[0]!, "user-prompt", "codex", { prompt: "in the other worktree" }, 2)
  await send(keys[0]!, "post-tool", "codex", { model: "gpt-4o", tokens_in: 11, tokens_out: 1 }, 1)
  await send(keys[0]!, "post-tool", "codex", { model: "gpt-4o", tokens_in: 5, tokens_out: 2 }, 2)
  accepted += 3
  // A retry of a signal from before, after its session ended (it opens none), and a new keyed signal sent twice.
  expect((await sendKeyed(keys[3]!, "replay-k1", "cursor")).duplicate).toBe(true)
  await sendKeyed(keys[3]!, "replay-k2", "codex")
  expect((await sendKeyed(keys[3]!, "replay-k2", "codex")).duplicate).toBe(true)
  accepted++
  expect(await sendBlocked("replay-b2")).toMatchObject(blocked)
  accepted++
  const before = await waitFor(() => snapshot(databaseUrl), (s) => s.events.length === accepted, { what: "all signals projected" })
  expect(before.sessions.filter((s: { end_reason: string }) => s.end_reason === "timeout")).toHaveLength(3)
  const firstUsersCodex = before.sessions.filter((s: any) => s.user_id === org.user_id && s.adapter === "codex")
  expect(firstUsersCodex.map((s: any) => [s.client_session_id, Number(s.signal_count), Number(s.tokens_in)]).sort()).toEqual([["codex-1", 2, 11], ["codex-2", 2,
    5]])
  expect(before.events.filter((e: { type: string }) => e.type === "goal-drift")).toHaveLength(1)
  expect(before.goals.map((g: { status: string }) => g.status).sort()).toEqual(["active", "completed"])
  expect(before.scopeUsage.length).toBeGreaterThan(0)
  expect(before.events.filter((e: { verdict: unknown }) => e.verdict !== null)).toHaveLength(2)
  await server.stop()
  /** After the replay, on a service started again: the retries are answered the stored verdict. */
  const retriesBlocked = async () => {
    const again = await startServer({ databaseUrl, env })
    try {
      for (const key of ["replay-b1", "replay-b2"]) {
        const res = await call(again, "POST", "/engine/v1/signals", {
          key: keys[3]!,
          body: { type: "post-tool", adapter: "cursor", session_id: "cursor-1", metadata: { model: "forbidden-model" } },
          headers: { "idempotency-key": key }
        })
        expect(res.body).toMatchObject({ ...blocked, duplicate: true })
      }
    } finally {
      await again.stop()
    }
  }
  return { databaseUrl, env, before, phase2: phase2!, retriesBlocked }
}

const replayCli = async (databaseUrl: string, env: Record<string, string>, ...args: Array<string>) => {
  const { stdout } = await run(process.execPath, [bin, "replay", ...args], {
    env: { ...childEnv(env), DATABASE_URL: databaseUrl, NODE_NO_WARNINGS: "1" }
  })
  return stdout
}

/** The report's pauses for garbage collection are part of the process's CPU time, never more. */
const expectGcWithinCpu = (output: string) => {
  const [, cpu, gc] = /([\d.]+) s of CPU in this process, ([\d.]+) s of it paused/.exec(output) ?? []
  expect(Number(gc)).toBeLessThanOrEqual(Number(cpu))
  expect(Number(cpu)).toBeGreaterThan(0)
}

/** The definitions of the events table's indexes, read without migrating (which would build missing ones). */
const eventIndexes = (databaseUrl: string) =>
  Effect.runPromise(
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql<{ readonly indexname: string; readonly indexdef: string }>`
      SELECT indexname, indexdef FROM pg_indexes WHERE tablename = 'events' ORDER BY indexname`
    }).pipe(Effect.scoped, Effect.provide(databaseFromUrl(databaseUrl)))
  )

/** Deletes the records of a partition before an offset behind the service's back, as Kafka retention does. */
const deleteFirstRecords = async (databaseUrl: string, env: Record<string, string>, partition: number, before: number) => {
  const topic = env.KAFKA_TOPIC
  if (topic === undefined) {
    await damage(databaseUrl, (sql) => sql`DELETE FROM signal_log WHERE partition = ${partition} AND "offset" < ${before}`)
    return
  }
  await deleteKafkaRecords(env.KAFKA_BROKERS!, topic, partition, before)
}

const damage = (databaseUrl: string, statements: (sql: SqlClient.SqlClient) => Effect.Effect<unknown, unknown>) =>
  withStore(databaseUrl, Effect.flatMap(SqlClient.SqlClient, statements))

describe.each(logVariants())("replay over %s", (_name, logEnv) => {
  it("rebuilds projections equal to the originals, sessions closed by timeout and stored verdicts included", { timeout: 120_000 }, async () => {
    const { databaseUrl, env, before, retriesBlocked } = await scenario(logEnv)
    // Damage the projections, so only a real rebuild can bring them back.
    await damage(databaseUrl, (sql) =>
      Effect.all([
        // (Events with a stored verdict are damaged, not deleted: the verdict is what the replay must keep.)
        sql`DELETE FROM events WHERE type = 'post-tool' AND verdict IS NULL`,
        sql`UPDATE events SET model = 'damaged', tokens_in = 99 WHERE verdict IS NOT NULL`,
        sql`UPDATE sessions SET signal_count = 0, ended_at = NULL, end_reason = NULL`,
        sql`DELETE FROM actor_state`,
        sql`DELETE FROM goals`,
        sql`UPDATE scope_usage SET tokens_in = 0`,
        // A session no record of the log accounts for (of a user whose actor state is gone).
        sql`INSERT INTO sessions SELECT 'ses_stray', org_id, environment, 'usr_gone', adapter, 'stray', project_id, started_at,
            last_activity_at, ended_at, end_reason, primary_model, models, tokens_in, tokens_out, cost_usd, signal_count, error_count
          FROM sessions LIMIT 1`
      ]))
    expect(await snapshot(databaseUrl)).not.toEqual(before)
    const indexes = await eventIndexes(databaseUrl)
    expect(indexes.map((i) => i.indexname)).toEqual(expect.arrayContaining(["events_by_session", "events_by_ts", "events_by_user"]))
    // Batches of 3: several per partition.
    const output = await replayCli(databaseUrl, { ...env, REPLAY_BATCH: "3" })
    expect(output).toMatch(
      /replayed \d+ records of 4 partition\(s\) in [\d.]+ s \(\d+ records\/s; read indexes built in [\d.]+ s; [\d.]+ s of CPU in this process, [\d.]+ s of it paused for garbage collection\)/
    )
    expectGcWithinCpu(output)
    expect(await snapshot(databaseUrl)).toEqual(before)
    // A full replay writes without the read indexes and builds them again: the same ones.
    expect(await eventIndexes(databaseUrl)).toEqual(indexes)
    await retriesBlocked()
  })

  it("after a replay killed half-way the service refuses to start, naming the partitions, until a replay finishes", { timeout: 120_000 }, async () => {
    const { databaseUrl, env, before } = await scenario(logEnv)
    // The database refuses one adapter's events, so the replay cannot get past them; it is killed there.
    await damage(
      databaseUrl,
      (sql) => sql`CREATE FUNCTION refuse_codex() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION 'refused by the test'; END $$`
    )
    await damage(
      databaseUrl,
      (sql) => sql`CREATE TRIGGER refuse_codex BEFORE INSERT ON events FOR EACH ROW WHEN (NEW.adapter = 'codex') EXECUTE FUNCTION refuse_codex()`
    )
    const replaying = spawn(process.execPath, [bin, "replay"], { env: { ...childEnv(env), DATABASE_URL: databaseUrl, NODE_NO_WARNINGS: "1" }, stdio: "ignore" })
    const unfinished = () =>
      withStore(
        databaseUrl,
        Effect.flatMap(SqlClient.SqlClient, (sql) => sql<{ readonly partition: number }>`SELECT partition FROM unfinished_replays ORDER BY partition`)
      )
    await waitFor(unfinished, (rows) => rows.length > 0, { what: "the replay under way" })
    // Past the emptying: some of the events are gone.
    await waitFor(() => snapshot(databaseUrl), (now) => now.events.length < before.events.length, { what: "the projections emptied" })
    replaying.kill("SIGKILL")
    await new Promise((resolve) => replaying.once("exit", resolve))
    const left = (await unfinished()).map((r) => r.partition)
    expect(left.length).toBeGreaterThan(0)

    const refused = run(process.execPath, [bin, "serve"], {
      env: { ...childEnv(env), DATABASE_URL: databaseUrl, NODE_NO_WARNINGS: "1", PORT: String(await freePort()), DEMO_BOOTSTRAP: "false" }
    })
    await expect(refused).rejects.toThrow(new RegExp(`signal-engine: a replay of partition\\(s\\) ${left.join(", ")} \\(started [^)]+\\) did not finish`))
    await expect(refused).rejects.toMatchObject({ code: 1 })

    await damage(databaseUrl, (sql) => sql`DROP TRIGGER refuse_codex ON events`)
    expect(await replayCli(databaseUrl, env)).toMatch(/replayed \d+ records/)
    expect(await unfinished()).toEqual([])
    expect(await snapshot(databaseUrl)).toEqual(before)
    const server = await startServer({ databaseUrl, env })
    await server.stop()
  })

  it("start-up builds the read indexes a full replay interrupted half-way left missing", { timeout: 60_000 }, async () => {
    const databaseUrl = await freshDatabase()
    await withStore(databaseUrl, Effect.void)
    const indexes = await eventIndexes(databaseUrl)
    await damage(databaseUrl, (sql) => Effect.all([sql`DROP INDEX events_by_ts`, sql`DROP INDEX events_by_user`]))
    expect((await eventIndexes(databaseUrl)).length).toBe(indexes.length - 2)
    const server = await startServer({ databaseUrl, env: logEnv() })
    await server.stop()
    expect(await eventIndexes(databaseUrl)).toEqual(indexes)
  })

  it("--from a time rebuilds what happened from then on, and leaves what came before", { timeout: 120_000 }, async () => {
    const { databaseUrl, env, before, phase2 } = await scenario(logEnv)
    await damage(databaseUrl, (sql) =>
      Effect.all([
        sql`UPDATE events SET model = 'damaged-before' WHERE ts < ${phase2}::timestamptz AND model IS NOT NULL`,
        // Gone, except an event with a stored verdict: damaged, so the replay must rewrite it and keep its verdict.
        sql`DELETE FROM events WHERE ts >= ${phase2}::timestamptz AND verdict IS NULL`,
        sql`UPDATE events SET model = 'damaged-after' WHERE ts >= ${phase2}::timestamptz`,
        sql`UPDATE sessions SET signal_count = 99 WHERE last_activity_at >= ${phase2}::timestamptz`
      ]))
    // Only a full replay rebuilds the read indexes, so only its report says how long that took.
    const output = await replayCli(databaseUrl, env, "--from", phase2)
    expect(output).toMatch(
      /replayed \d+ records of 4 partition\(s\) in [\d.]+ s \(\d+ records\/s; [\d.]+ s of CPU in this process, [\d.]+ s of it paused for garbage collection\)/
    )
    expectGcWithinCpu(output)
    const after = await snapshot(databaseUrl)
    expect(after.sessions).toEqual(before.sessions)
    expect(after.actors).toEqual(before.actors)
    expect(after.goals).toEqual(before.goals)
    expect(after.scopeUsage).toEqual(before.scopeUsage)
    const late = (e: { ts: string }) => Date.parse(e.ts) >= Date.parse(phase2)
    expect(after.events.filter(late)).toEqual(before.events.filter(late))
    expect(after.events.filter(late)).toHaveLength(9)
    expect(after.events.filter((e: { verdict: unknown }) => e.verdict !== null)).toHaveLength(2)
    const early = after.events.filter((e: { ts: string; model: string | null }) => !late(e) && e.model !== null)
    expect(early.length).toBeGreaterThan(0)
    expect(early.every((e: { model: string }) => e.model === "damaged-before")).toBe(true)
  })

  it("refuses a log that lost its first records; with --allow-missing-records rebuilds from what is left", { timeout: 120_000 }, async () => {
    const { databaseUrl, env, before } = await scenario(logEnv)
    type Event = { readonly id: string; readonly log_partition: number; readonly log_offset: string }
    const events: ReadonlyArray<Event> = before.events
    const p = events[0]!.log_partition
    await deleteFirstRecords(databaseUrl, env, p, 2)
    await expect(replayCli(databaseUrl, env)).rejects.toThrow(
      new RegExp(`signal-engine: the log no longer holds the first records of partition\\(s\\) ${p} \\(offsets 0\\.\\.1\\), deleted by retention or by hand`)
    )
    await expect(replayCli(databaseUrl, env, "--partition", String(p))).rejects.toThrow(/the log no longer holds the first records/)
    expect(await snapshot(databaseUrl)).toEqual(before)

    const output = await replayCli(databaseUrl, env, "--allow-missing-records")
    expect(output).toMatch(/; 2 records were missing from the start of the log$/m)
    const after: ReadonlyArray<Event> = (await snapshot(databaseUrl)).events
    const elsewhere = (e: Event) => e.log_partition !== p
    expect(after.filter(elsewhere)).toEqual(events.filter(elsewhere))
    // Of partition p, the events of the records that are left, and no others.
    const ids = (list: ReadonlyArray<Event>) => list.filter((e) => !elsewhere(e)).map((e) => e.id)
    expect(ids(after)).toEqual(ids(events.filter((e) => Number(e.log_offset) >= 2)))
    expect(ids(after).length).toBeGreaterThan(0)
  })

  it("refuses a --from that is not a time", async () => {
    await expect(replayCli(await freshDatabase(), logEnv(), "--from", "yesterday")).rejects.toThrow(/ISO 8601/)
  })

  it("refuses a --partition the log does not have, naming the range", async () => {
    const replaying = replayCli(await freshDatabase(), logEnv(), "--partition", "99")
    await expect(replaying).rejects.toThrow(
      /signal-engine: the log has no partition 99: its partitions are 0\.\.3 \(LOG_PARTITIONS=4\); nothing was replayed/
    )
    await expect(replaying).rejects.toMatchObject({ code: 1 })
  })
})

/** The sessions that hold or wait for the serving/replay lock of a database (replay-lock.ts), as PostgreSQL shows them. */
const lockSessions = (databaseUrl: string) =>
  withStore(
    databaseUrl,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      return yield* sql<{ readonly mode: string; readonly granted: boolean; readonly pid: number }>`
      SELECT l.mode, l.granted, l.pid FROM pg_locks l JOIN pg_database d ON d.oid = l.database AND d.datname = current_database()
      WHERE l.locktype = 'advisory' AND l.classid = ${0x5347_4e45} AND l.objid = 1 AND l.objsubid = 2 ORDER BY l.mode`
    })
  )

/** The same without the sessions' ids. */
const lockHolders = async (databaseUrl: string) => (await lockSessions(databaseUrl)).map(({ mode, granted }) => ({ mode, granted }))

describe("replay and a running service", () => {
  const [, logEnv] = logVariants()[0]!

  it("a replay refuses to start while the service runs on the database, and changes nothing", { timeout: 60_000 }, async () => {
    const databaseUrl = await freshDatabase()
    const server = await startServer({ databaseUrl, env: logEnv() })
    const org = await bootstrapOrg(databaseUrl, "guarded", "team")
    const sent = await call(server, "POST", "/engine/v1/signals", {
      key: org.license_key,
      body: { type: "session-start", adapter: "claude-code", session_id: "s-1", metadata: {} }
    })
    expect(sent.status).toBe(200)
    // Projections are written behind the verdict; a read through the API waits for them.
    expect((await call(server, "GET", "/api/v1/events", { key: org.api_key_live! })).body.data).toHaveLength(1)
    const before = await snapshot(databaseUrl)
    expect(await lockHolders(databaseUrl)).toEqual([{ mode: "ShareLock", granted: true }])

    await expect(replayCli(databaseUrl, logEnv())).rejects.toThrow(
      /signal-engine: the service is running on this database \(1 node\(s\), from [^)]+\); stop it before replaying/
    )
    await expect(replayCli(databaseUrl, logEnv(), "--partition", "0")).rejects.toThrow(/the service is running on this database/)
    expect(await snapshot(databaseUrl)).toEqual(before)
    // The service went on serving: the refused replay emptied nothing under it.
    expect((await call(server, "GET", "/api/v1/events", { key: org.api_key_live! })).body.data).toHaveLength(1)

    // The node's lock session ends (as in a database restart): it takes the lock again on another.
    const [held] = await lockSessions(databaseUrl)
    await withStore(databaseUrl, Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT pg_terminate_backend(${held!.pid})`))
    const again = await waitFor(() => lockSessions(databaseUrl), (rows) => rows.length === 1 && rows[0]!.pid !== held!.pid, {
      what: "the node to take the lock again"
    })
    expect(again).toEqual([{ mode: "ShareLock", granted: true, pid: expect.any(Number) }])
    await expect(replayCli(databaseUrl, logEnv())).rejects.toThrow(/the service is running on this database/)

    await server.stop()
    expect(await lockHolders(databaseUrl)).toEqual([])
    expect(await replayCli(databaseUrl, logEnv())).toMatch(/replayed 1 records of 4 partition\(s\)/)
    expect(await snapshot(databaseUrl)).toEqual(before)
  })

  it("a service started during a replay waits for it to end, then serves", { timeout: 60_000 }, async () => {
    const databaseUrl = await freshDatabase()
    await withStore(databaseUrl, Effect.void)
    // What a running replay holds, taken here so that it lasts as long as the test wants.
    const replayScope = Effect.runSync(Scope.make())
    const database = await Effect.runPromise(Layer.buildWithScope(databaseFromUrl(databaseUrl), replayScope))
    await Effect.runPromise(holdForReplay.pipe(Effect.provideService(Scope.Scope, replayScope), Effect.provideContext(database)))
    await expect(replayCli(databaseUrl, logEnv())).rejects.toThrow(/another replay is running on this database/)

    let started = false
    const starting = startServer({ databaseUrl, env: logEnv() }).then((server) => {
      started = true
      return server
    })
    const waiting = await waitFor(() => lockHolders(databaseUrl), (rows) => rows.some((r) => !r.granted), { what: "the node to wait for the lock" })
    expect(waiting).toEqual([
      { mode: "ExclusiveLock", granted: true },
      { mode: "ShareLock", granted: false }
    ])
    // Still waiting, so not serving.
    expect(started).toBe(false)

    await Effect.runPromise(Scope.close(replayScope, Exit.void))
    const server = await starting
    try {
      const org = await bootstrapOrg(databaseUrl, "after", "team")
      const sent = await call(server, "POST", "/engine/v1/signals", {
        key: org.license_key,
        body: { type: "session-start", adapter: "cursor", session_id: "s-1", metadata: {} }
      })
      expect(sent.status).toBe(200)
      expect(await lockHolders(databaseUrl)).toEqual([{ mode: "ShareLock", granted: true }])
    } finally {
      await server.stop()
    }
  })
})

describe("the log a database is fed from", () => {
  const [[pgName, pgEnv], [kafkaName, kafkaEnv]] = logVariants() as [
    readonly [string, () => Record<string, string>],
    readonly [string, () => Record<string, string>]
  ]
  const pgLog = /the PostgreSQL table signal_log/

  /** A database fed two signals by a service over `env`, stopped; and its projections then. */
  const fed = async (env: Record<string, string>) => {
    const databaseUrl = await freshDatabase()
    const server = await startServer({ databaseUrl, env })
    const org = await bootstrapOrg(databaseUrl, "fed", "team")
    for (const type of ["session-start", "post-tool"]) {
      const res = await call(server, "POST", "/engine/v1/signals", {
        key: org.license_key,
        body: { type, adapter: "claude-code", session_id: "s-1", metadata: {} }
      })
      expect(res.status).toBe(200)
    }
    // Projections are written behind the verdicts; a stopping node commits what it folded.
    await server.stop()
    const before = await snapshot(databaseUrl)
    expect(before.events).toHaveLength(2)
    return { databaseUrl, before }
  }

  const serveCli = async (databaseUrl: string, env: Record<string, string>) =>
    run(process.execPath, [bin, "serve"], {
      env: { ...childEnv(env), DATABASE_URL: databaseUrl, NODE_NO_WARNINGS: "1", PORT: String(await freePort()), DEMO_BOOTSTRAP: "false" }
    })

  const topics = async () => {
    const admin = new Kafka({ brokers: inject("kafkaBrokers").split(","), logLevel: logLevel.ERROR }).admin()
    await admin.connect()
    try {
      return await admin.listTopics()
    } finally {
      await admin.disconnect()
    }
  }

  /** serve and replay over `env` are refused with `message` (exit 1), and change nothing. */
  const expectRefused = async (databaseUrl: string, before: unknown, env: Record<string, string>, message: RegExp) => {
    for (const command of [serveCli, replayCli]) {
      const attempt = command(databaseUrl, env)
      await expect(attempt).rejects.toThrow(message)
      await expect(attempt).rejects.toMatchObject({ code: 1 })
    }
    expect(await snapshot(databaseUrl)).toEqual(before)
    // Nor is the configured topic created on the broker.
    if (env.KAFKA_TOPIC !== undefined) expect(await topics()).not.toContain(env.KAFKA_TOPIC)
  }

  it(`a database fed from ${pgName} refuses ${kafkaName}, and the reverse; the right log still replays`, { timeout: 120_000 }, async () => {
    const pg = await fed(pgEnv())
    const kafka = kafkaEnv()
    await expectRefused(
      pg.databaseUrl,
      pg.before,
      kafka,
      new RegExp(
        `signal-engine: this database is fed from ${pgLog.source} \\(since [^)]+\\), but the configuration names Kafka topic ` +
          `${kafka.KAFKA_TOPIC} of cluster [^ ]+ \\(KAFKA_BROKERS, KAFKA_TOPIC\\): unset KAFKA_BROKERS\\. .*Nothing was changed\\.`
      )
    )
    expect(await replayCli(pg.databaseUrl, pgEnv())).toMatch(/replayed 2 records/)
    expect(await snapshot(pg.databaseUrl)).toEqual(pg.before)

    const fromKafka = kafkaEnv()
    const k = await fed(fromKafka)
    await expectRefused(
      k.databaseUrl,
      k.before,
      pgEnv(),
      new RegExp(
        `signal-engine: this database is fed from Kafka topic ${fromKafka.KAFKA_TOPIC} of cluster [^ ]+ \\(since [^)]+\\), but the ` +
          `configuration names ${pgLog.source} \\(KAFKA_BROKERS is not set\\): set KAFKA_BROKERS to that cluster's brokers and ` +
          `KAFKA_TOPIC=${fromKafka.KAFKA_TOPIC}\\.`
      )
    )
    expect(await replayCli(k.databaseUrl, fromKafka)).toMatch(/replayed 2 records/)
    expect(await snapshot(k.databaseUrl)).toEqual(k.before)
  })

  it("a database fed from one Kafka topic refuses another topic", { timeout: 120_000 }, async () => {
    const env = kafkaEnv()
    const { databaseUrl, before } = await fed(env)
    const renamed = { ...env, KAFKA_TOPIC: `${env.KAFKA_TOPIC}-renamed` }
    await expectRefused(
      databaseUrl,
      before,
      renamed,
      new RegExp(
        `this database is fed from Kafka topic ${env.KAFKA_TOPIC} of cluster .*, but the configuration names Kafka topic ${renamed.KAFKA_TOPIC} `
      )
    )
  })

  it("replay --adopt-log rebuilds from the configured log and feeds the database from it from then on", { timeout: 120_000 }, async () => {
    const { databaseUrl, before } = await fed(pgEnv())
    const kafka = kafkaEnv()
    await expect(replayCli(databaseUrl, kafka, "--adopt-log", "--partition", "0")).rejects.toThrow(
      /--adopt-log rebuilds every partition from the start: use it without --partition and --from/
    )
    expect(await snapshot(databaseUrl)).toEqual(before)
    // The refusal says how to move on; the new topic holds nothing, so nothing is left.
    await expect(replayCli(databaseUrl, kafka)).rejects.toThrow(/run `signal-engine replay --adopt-log` with this configuration/)
    const output = await replayCli(databaseUrl, kafka, "--adopt-log")
    expect(output).toMatch(/replayed 0 records of 4 partition\(s\)/)
    expect(output).toMatch(new RegExp(`this database is now fed from Kafka topic ${kafka.KAFKA_TOPIC} of cluster `))
    expect((await snapshot(databaseUrl)).events).toEqual([])
    const server = await startServer({ databaseUrl, env: kafka })
    await server.stop()
    await expect(replayCli(databaseUrl, pgEnv())).rejects.toThrow(new RegExp(`this database is fed from Kafka topic ${kafka.KAFKA_TOPIC} `))
  })

  describe.each(logVariants())("a database fed from %s before it recorded its log (an upgrade)", (name, logEnv) => {
    it("adopts that log, and refuses another", { timeout: 120_000 }, async () => {
      const env = logEnv()
      const { databaseUrl, before } = await fed(env)
      await damage(databaseUrl, (sql) => sql`DELETE FROM log_identity`)
      const other = name === pgName ? kafkaEnv() : pgEnv()
      const written = name === pgName ? "the PostgreSQL table signal_log" : `Kafka topic ${env.KAFKA_TOPIC}`
      await expectRefused(
        databaseUrl,
        before,
        other,
        new RegExp(
          `signal-engine: this database's projections were written from ${written}, but the configuration names .*: configure that log instead\\.`
        )
      )
      expect(await replayCli(databaseUrl, env)).toMatch(/replayed 2 records/)
      expect(await snapshot(databaseUrl)).toEqual(before)
      const recorded = await withStore(databaseUrl, Effect.flatMap(SqlClient.SqlClient, (sql) => sql`SELECT kind, topic FROM log_identity`))
      expect(recorded).toEqual([name === pgName ? { kind: "pg", topic: null } : { kind: "kafka", topic: env.KAFKA_TOPIC }])
    })
  })
})
