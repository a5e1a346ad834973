import { NodeRuntime, NodeServices } from "@effect/platform-node"
import { Cause, Console, Effect, Layer, Logger, Option, Predicate } from "effect"
import { Argument, CliError, Command, Flag } from "effect/cli"
import { AppConfig } from "../config.ts"
import { Environment } from "../domain/environments.ts"
import { isApiError } from "../domain/errors.ts"
import { Plan } from "../domain/plans.ts"
import { parseScopes } from "../domain/scopes.ts"
import { type ReplayProgress, replay } from "../engine/replay.ts"
import { describeLog, LogIdentityGuard } from "../log/log-identity.ts"
import { AdminLive, MigrateLive, replayLive, ServerLive } from "../main.ts"
import { migrate } from "../store/database.ts"
import { Tenancy } from "../store/tenancy-repo.ts"
import { Role } from "../domain/tenancy.ts"
import { countGcPauses } from "./gc-pauses.ts"
import { checkSchemas, writeSchemas } from "./schemas.ts"

const json = Flag.Boolean("json").pipe(Flag.withDescription("print JSON"), Flag.withDefault(false))

const print = (asJson: boolean, value: Record<string, unknown>) =>
  Console.log(
    asJson
      ? JSON.stringify(value)
      : Object.entries(value).map(([k, v]) => `${k.padEnd(24)} ${Array.isArray(v) ? v.join(",") : String(v)}`).join("\n")
  )

const serve = Command.make("serve", {}, () => Layer.launch(ServerLive)).pipe(
  Command.withDescription("Run the service (PORT, DATABASE_URL, KAFKA_BROKERS, TLS_CERT/TLS_KEY; see README)")
)

const migrateCommand = Command.make("migrate", {}, () =>
  Effect.gen(function*() {
    const applied = yield* migrate
    yield* Console.log(applied.length === 0 ? "database is up to date" : applied.map(([id, name]) => `applied ${id}_${name}`).join("\n"))
  }).pipe(Effect.provide(MigrateLive), Effect.orDie)).pipe(Command.withDescription("Apply pending database migrations"))

const schemas = Command.make("schemas", {
  check: Flag.Boolean("check").pipe(
    Flag.withDescription("fail when the files in schemas/ differ from the code instead of writing them"),
    Flag.withDefault(false)
  )
}, ({ check }) =>
  Effect.gen(function*() {
    if (check) {
      const drifted = yield* checkSchemas
      if (drifted.length > 0) {
        yield* Console.error(`out of date: ${drifted.join(", ")} (run npm run schemas)`)
        return yield* Effect.fail("schemas drifted")
      }
      yield* Console.log("schemas are up to date")
    } else {
      const written = yield* writeSchemas
      yield* Console.log(written.map((f) => `wrote ${f}`).join("\n"))
    }
  })).pipe(Command.withDescription("Write the OpenAPI documents into schemas/"))

const bootstrap = Command.make("bootstrap", {
  org: Flag.String("org").pipe(Flag.withDescription("name of the new organization")),
  plan: Flag.Literals("plan", Plan.literals).pipe(Flag.withDefault("team" as const)),
  json
}, ({ org, plan, json }) =>
  Effect.gen(function*() {
    const tenancy = yield* Tenancy
    const config = yield* AppConfig
    const creds = yield* tenancy.bootstrap({ org, plan, apiKeyPrefix: config.apiKeyPrefix })
    yield* print(json, { ...creds })
  }).pipe(Effect.provide(AdminLive))).pipe(
    Command.withDescription("Create an org with an admin user, a team, API keys and a license key, and print them")
  )

const orgFlag = Flag.String("org").pipe(Flag.withDescription("org id or name"))

const createUser = Command.make("create-user", {
  org: orgFlag,
  email: Flag.String("email"),
  name: Flag.String("name"),
  role: Flag.Literals("role", Role.literals).pipe(Flag.withDefault("member" as const)),
  team: Flag.String("team").pipe(Flag.withDescription("team id to join (repeatable)"), Flag.optional),
  json
}, ({ org, email, name, role, team, json }) =>
  Effect.gen(function*() {
    const tenancy = yield* Tenancy
    const found = yield* tenancy.findOrg(org)
    const user = yield* tenancy.createUser(found.id, { email, name, role, team_ids: Option.toArray(team) })
    yield* print(json, { ...user })
  }).pipe(Effect.provide(AdminLive))).pipe(Command.withDescription("Add a user to an org"))

const createApiKey = Command.make("create-api-key", {
  org: orgFlag,
  env: Flag.Literals("env", Environment.literals).pipe(Flag.withDefault("test" as const)),
  scopes: Flag.String("scopes").pipe(Flag.withDescription("comma-separated, e.g. rules:read,events:read; or all")),
  name: Flag.String("name").pipe(Flag.withDefault("cli")),
  json
}, ({ org, env, scopes, name, json }) =>
  Effect.gen(function*() {
    const parsed = parseScopes(scopes)
    if (typeof parsed === "string") return yield* Effect.fail(parsed)
    const tenancy = yield* Tenancy
    const found = yield* tenancy.findOrg(org)
    const { record, key } = yield* tenancy.createApiKey(found.id, { environment: env, name, scopes: parsed })
    yield* print(json, { ...record, key })
  }).pipe(Effect.provide(AdminLive))).pipe(Command.withDescription("Create an API key (shown once)"))

const createLicenseKey = Command.make("create-license-key", {
  org: orgFlag,
  user: Flag.String("user").pipe(Flag.withDescription("user id")),
  env: Flag.Literals("env", Environment.literals).pipe(Flag.withDefault("test" as const)),
  json
}, ({ org, user, env, json }) =>
  Effect.gen(function*() {
    const tenancy = yield* Tenancy
    const found = yield* tenancy.findOrg(org)
    const { record, key } = yield* tenancy.createLicenseKey(found.id, { environment: env, user_id: user })
    yield* print(json, { ...record, key })
  }).pipe(Effect.provide(AdminLive))).pipe(Command.withDescription("Create a license key for a user (shown once)"))

const revokeKey = Command.make("revoke-key", {
  id: Argument.String("key-id").pipe(Argument.withDescription("id of an API key (key_…) or license key (lk_…)"))
}, ({ id }) =>
  Effect.gen(function*() {
    const tenancy = yield* Tenancy
    yield* tenancy.revokeKey(id)
    yield* Console.log(`revoked ${id}`)
  }).pipe(Effect.provide(AdminLive))).pipe(Command.withDescription("Revoke an API or license key"))

const replayCommand = Command.make("replay", {
  partition: Flag.Int("partition").pipe(Flag.withDescription("only this partition (default: all)"), Flag.optional),
  from: Flag.String("from").pipe(
    Flag.withDescription("earliest (everything), or an ISO 8601 time: rebuild only what happened at or after it"),
    Flag.withDefault("earliest")
  ),
  allowMissingRecords: Flag.Boolean("allow-missing-records").pipe(
    Flag.withDescription("rebuild from what is left when records were deleted from the start of the log (retention)"),
    Flag.withDefault(false)
  ),
  adoptLog: Flag.Boolean("adopt-log").pipe(
    Flag.withDescription("rebuild every projection from the configured log and feed the database from it from now on"),
    Flag.withDefault(false)
  )
}, ({ partition, from, allowMissingRecords, adoptLog }) =>
  Effect.gen(function*() {
    const since = from === "earliest" ? undefined : new Date(from)
    if (since !== undefined && (!/^\d{4}-\d\d-\d\dT\d\d:\d\d(:\d\d(\.\d+)?)?(Z|[+-]\d\d:\d\d)$/.test(from) || Number.isNaN(since.getTime()))) {
      return yield* Effect.fail(`--from ${from}: expected earliest or an ISO 8601 time with a zone, e.g. 2026-11-20T00:00:00Z`)
    }
    // Only a full rebuild leaves nothing of the log the database was fed from.
    if (adoptLog && (Option.isSome(partition) || since !== undefined)) {
      return yield* Effect.fail("--adopt-log rebuilds every partition from the start: use it without --partition and --from")
    }
    yield* replayAndReport({ partition, since, allowMissingRecords, adoptLog }).pipe(Effect.provide(replayLive({ adoptLog })))
  })).pipe(
    Command.withDescription("Rebuild sessions and events from the signal log; refuses while the service runs on the database; sends nothing")
  )

const replayAndReport = (options: {
  readonly partition: Option.Option<number>
  readonly since: Date | undefined
  readonly allowMissingRecords: boolean
  readonly adoptLog: boolean
}) =>
  Effect.gen(function*() {
    const { partition, since, allowMissingRecords } = options
    const started = Date.now()
    const gc = countGcPauses()
    const report = (p: ReplayProgress) => Console.error(`\rreplaying partition ${p.partition}: ${bar(p.done, p.total)} ${p.done}/${p.total} records`)
    const result = yield* replay({
      partitions: Option.isSome(partition) ? [partition.value] : undefined,
      from: since,
      onProgress: report,
      allowMissingRecords
    })
    const seconds = (Date.now() - started) / 1000
    const cpu = process.cpuUsage()
    const gcMs = yield* Effect.promise(() => gc.stop())
    yield* Console.log(
      `replayed ${result.records} records of ${result.partitions} partition(s) in ${seconds.toFixed(1)} s` +
        ` (${Math.round(result.records / Math.max(seconds, 0.001))} records/s` +
        (result.indexesMs === undefined ? "" : `; read indexes built in ${(result.indexesMs / 1000).toFixed(1)} s`) +
        `; ${((cpu.user + cpu.system) / 1e6).toFixed(1)} s of CPU in this process` +
        `, ${(gcMs / 1000).toFixed(1)} s of it paused for garbage collection)` +
        (result.missing > 0 ? `; ${result.missing} records were missing from the start of the log` : "")
    )
    if (options.adoptLog) {
      const adopted = yield* LogIdentityGuard.use((guard) => guard.adoptAdmitted)
      if (adopted !== undefined) yield* Console.log(`this database is now fed from ${describeLog(adopted)}`)
    }
  })

const bar = (done: number, total: number) => {
  const width = 30
  const filled = total === 0 ? width : Math.round((done / total) * width)
  return `[${"#".repeat(filled)}${".".repeat(width - filled)}]`
}

const admin = Command.make("admin").pipe(
  Command.withDescription("Manage orgs, users and credentials"),
  Command.withSubcommands([bootstrap, createUser, createApiKey, createLicenseKey, revokeKey])
)

const cli = Command.make("signal-engine").pipe(
  Command.withDescription("Signal and rule engine for AI coding tools"),
  Command.withSubcommands([serve, migrateCommand, schemas, replayCommand, admin])
)

/**
 * A failed command prints one line to stderr and exits 1; only unexpected defects show a trace.
 * Asking for help (`--help`, `help`, no command at all) is not a failure: the usage is printed
 * and the exit code is 0. A command line the parser refuses (an unknown command or flag, a
 * missing value) has had its usage and the reason printed by the parser: exit 2, as getopt does.
 */
const reportFailure = (cause: Cause.Cause<unknown>) =>
  Effect.gen(function*() {
    const failure = cause.reasons.find(Cause.isFailReason)
    const error: unknown = failure?.error
    if (CliError.isCliError(error) && error._tag === "ShowHelp") {
      process.exitCode = error.errors.length === 0 ? 0 : 2
      return
    }
    const message = isApiError(error)
      ? error.error
      : typeof error === "string"
      ? error
      : error instanceof Error && Predicate.hasProperty(error, "_tag") && !Cause.hasDies(cause)
      ? error.message
      : Cause.pretty(cause)
    yield* Console.error(`signal-engine: ${message}`)
    process.exitCode = 1
  })

/** `help [command…]` is `[command…] --help`; anything else goes to the parser as typed. */
const commandLine = (args: ReadonlyArray<string>) => (args[0] === "help" ? [...args.slice(1), "--help"] : args)

Command.runWith(cli, { version: "0.1.0" })(commandLine(process.argv.slice(2))).pipe(
  Effect.catchCause((cause) => (Cause.hasInterruptsOnly(cause) ? Effect.failCause(cause) : reportFailure(cause))),
  // Logs go to stderr; stdout carries what a command prints (credentials, --json output).
  Effect.provideService(Logger.LogToStderr, true),
  Effect.provide(NodeServices.layer),
  NodeRuntime.runMain
)
