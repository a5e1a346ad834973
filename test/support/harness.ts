import { ConfigProvider, Effect, Exit, Fiber, Layer, Scope } from "effect"
import { SqlClient } from "effect/sql"
import { randomBytes } from "node:crypto"
import pg from "pg"
import { inject } from "vitest"
import { AppConfig } from "../../src/config.ts"
import type { Plan } from "../../src/domain/plans.ts"
import { appLayer, StoreLive } from "../../src/main.ts"
import { databaseFromUrl } from "../../src/store/database.ts"
import type { Channels } from "../../src/store/channels-repo.ts"
import { Rules } from "../../src/store/rules-repo.ts"
import { type Bootstrapped, Tenancy } from "../../src/store/tenancy-repo.ts"
import type { Webhooks } from "../../src/store/webhooks-repo.ts"
import { freePort } from "./ports.ts"

/** A new, empty database on the run's PostgreSQL server. */
export const freshDatabase = async (): Promise<string> => {
  const admin = new URL(inject("adminDatabaseUrl"))
  const name = `t_${randomBytes(6).toString("hex")}`
  await Effect.runPromise(
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* sql`CREATE DATABASE ${sql(name)}`
    }).pipe(Effect.provide(databaseFromUrl(admin.toString())), Effect.scoped)
  )
  admin.pathname = `/${name}`
  return admin.toString()
}

/** Runs an effect that needs the repositories against a database (migrating it first). */
export const withStore = <A, E>(
  databaseUrl: string,
  effect: Effect.Effect<A, E, Tenancy | Rules | Webhooks | Channels | SqlClient.SqlClient>,
  env: Record<string, string> = {}
): Promise<A> =>
  Effect.runPromise(
    effect.pipe(
      Effect.provide(
        StoreLive.pipe(
          Layer.provideMerge(databaseFromUrl(databaseUrl)),
          Layer.provideMerge(AppConfig.layer),
          Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env })))
        )
      ),
      Effect.scoped
    )
  )

export const bootstrapOrg = (databaseUrl: string, org: string, plan: Plan): Promise<Bootstrapped> =>
  withStore(databaseUrl, Tenancy.use((t) => t.bootstrap({ org, plan, apiKeyPrefix: "sek" })))

export interface TestServer {
  readonly baseUrl: string
  readonly port: number
  readonly databaseUrl: string
  readonly stop: () => Promise<void>
}

/**
 * Starts the real service in this process on a free port, over the given database, and waits
 * until it answers. `env` is the service's configuration, as environment variables would be.
 */
export const startServer = async (
  options: { readonly databaseUrl?: string; readonly env?: Record<string, string> } = {}
): Promise<TestServer> => {
  const databaseUrl = options.databaseUrl ?? (await freshDatabase())
  const port = await freePort()
  const env: Record<string, string> = {
    HOST: "127.0.0.1",
    PORT: String(port),
    DEMO_BOOTSTRAP: "false",
    AUTH_CACHE_TTL: "0 millis",
    ...options.env
  }
  const scope = Effect.runSync(Scope.make())
  const fiber = Effect.runFork(
    Layer.launch(appLayer(databaseFromUrl(databaseUrl))).pipe(
      Effect.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env }))),
      Effect.provideService(Scope.Scope, scope)
    )
  )
  const scheme = env.TLS_CERT ? "https" : "http"
  const baseUrl = `${scheme}://127.0.0.1:${port}`
  const stop = async () => {
    await Effect.runPromise(Fiber.interrupt(fiber))
    await Effect.runPromise(Scope.close(scope, Exit.void))
  }
  const deadline = Date.now() + 60_000
  for (;;) {
    if (fiber.pollUnsafe() !== undefined) throw new Error(`the server exited while starting: ${String(fiber.pollUnsafe())}`)
    const up = await fetch(`http://127.0.0.1:${port}/healthz`).then((r) => r.ok || r.status === 308, () => false)
    if (up || (scheme === "https" && (await portOpen(port)))) break
    if (Date.now() > deadline) {
      await stop()
      throw new Error("the server did not start within 60 s")
    }
    await new Promise((r) => setTimeout(r, 50))
  }
  return { baseUrl, port, databaseUrl, stop }
}

const portOpen = async (port: number): Promise<boolean> => {
  const { connect } = await import("node:net")
  return new Promise((resolve) => {
    const socket = connect({ port, host: "127.0.0.1" }, () => {
      socket.end()
      resolve(true)
    })
    socket.once("error", () => resolve(false))
  })
}

export interface JsonResponse {
  readonly status: number
  readonly headers: Headers
  readonly body: any
}

/** A client call: method, path, optional bearer key and JSON body; the parsed JSON answer. */
export const call = async (
  server: { readonly baseUrl: string },
  method: string,
  path: string,
  options: {
    readonly key?: string
    readonly body?: unknown
    readonly rawBody?: string | Uint8Array
    readonly contentType?: string
    readonly headers?: Readonly<Record<string, string>>
  } = {}
): Promise<JsonResponse> => {
  const headers: Record<string, string> = { ...options.headers }
  if (options.key !== undefined) headers.authorization = `Bearer ${options.key}`
  let body: string | Uint8Array | undefined
  if (options.rawBody !== undefined) body = options.rawBody
  else if (options.body !== undefined) body = JSON.stringify(options.body)
  if (body !== undefined) headers["content-type"] = options.contentType ?? "application/json"
  const response = await fetch(`${server.baseUrl}${path}`, { method, headers, ...(body !== undefined ? { body } : {}) })
  const text = await response.text()
  let parsed: unknown = text
  try {
    parsed = text === "" ? undefined : JSON.parse(text)
  } catch {
    // not JSON; the assertions will show the text
  }
  return { status: response.status, headers: response.headers, body: parsed }
}

/**
 * Runs `body` with a server on a database of its own and a direct connection to that database
 * (to lock or alter what the server uses under it); closes both afterwards, whatever happens.
 */
export const withServerAndDatabase = async <A>(
  env: Record<string, string>,
  body: (server: TestServer, database: pg.Client) => Promise<A>
): Promise<A> => {
  const server = await startServer({ env })
  const database = new pg.Client({ connectionString: server.databaseUrl })
  try {
    await database.connect()
    return await body(server, database)
  } finally {
    await database.end().catch(() => undefined)
    await server.stop()
  }
}
