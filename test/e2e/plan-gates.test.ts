import { ConfigProvider, Effect, Layer, Schema } from "effect"
import { HttpRouter, HttpServer } from "effect/http"
import { HttpApi, HttpApiBuilder, HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DatabaseHealth } from "../../src/store/database-health.ts"
import { Authenticator, EngineAuthLive } from "../../src/http/auth.ts"
import { EngineAuth, EnginePrincipal, Envelope, RequiredFeature } from "../../src/http/contract.ts"
import { EnvelopeLive } from "../../src/http/envelope.ts"
import { gateway } from "../../src/http/gateway.ts"
import { makeRouteTable } from "../../src/http/route-table.ts"
import { AppConfig } from "../../src/config.ts"
import { StoreLive } from "../../src/main.ts"
import { databaseFromUrl } from "../../src/store/database.ts"
import type { Bootstrapped } from "../../src/store/tenancy-repo.ts"
import { bootstrapOrg, freshDatabase } from "../support/harness.ts"
import { Draining } from "../../src/http/draining.ts"

/**
 * The plan gate and the Deprecation header are mechanisms every engine endpoint gets from its
 * annotations. This suite serves a small API through the real middleware to show both.
 */
class Probe extends HttpApiGroup.make("probe")
  .add(
    HttpApiEndpoint.get("goals", "/probe/goals", { success: Schema.Struct({ user_id: Schema.String }) })
      .annotate(RequiredFeature, "goals"),
    HttpApiEndpoint.get("old", "/probe/old", { success: Schema.Struct({ ok: Schema.Boolean }) })
      .annotate(RequiredFeature, "signals")
      .annotate(OpenApi.Deprecated, true)
  )
  .middleware(EngineAuth)
  .middleware(Envelope)
{}
class ProbeApi extends HttpApi.make("probe-api").add(Probe).prefix("/engine/v1") {}

const ProbeHandlers = HttpApiBuilder.group(ProbeApi, "probe", (handlers) =>
  Effect.succeed(
    handlers
      .handle("goals", () => EnginePrincipal.use((p) => Effect.succeed({ user_id: p.userId })))
      .handle("old", () => Effect.succeed({ ok: true }))
  ))

let handler: (request: Request) => Promise<Response>
let dispose: () => Promise<void>
let lite: Bootstrapped
let developer: Bootstrapped

beforeAll(async () => {
  const databaseUrl = await freshDatabase()
  lite = await bootstrapOrg(databaseUrl, "lite", "lite")
  developer = await bootstrapOrg(databaseUrl, "dev", "developer")
  const core = Authenticator.layer({ apiKeyPrefix: "sek" }).pipe(
    Layer.provideMerge(StoreLive),
    Layer.provideMerge(databaseFromUrl(databaseUrl)),
    Layer.provideMerge(AppConfig.layer),
    Layer.provide(ConfigProvider.layer(ConfigProvider.fromEnv({ env: { AUTH_CACHE_TTL: "0 millis" } })))
  )
  const app = Layer.mergeAll(
    HttpApiBuilder.layer(ProbeApi).pipe(Layer.provide(ProbeHandlers)),
    gateway(makeRouteTable([ProbeApi], []))
  ).pipe(Layer.provide([EngineAuthLive, EnvelopeLive, Draining.layer, DatabaseHealth.layer]), Layer.provideMerge(core), Layer.provide(HttpServer.layerServices))
  const web = HttpRouter.toWebHandler(app, { disableLogger: true })
  handler = (request) => web.handler(request)
  dispose = web.dispose
})
afterAll(() => dispose?.())

const get = async (path: string, key: string) => {
  const res = await handler(new Request(`http://localhost${path}`, { headers: { authorization: `Bearer ${key}` } }))
  const body: any = await res.json()
  return { status: res.status, headers: res.headers, body }
}

describe("engine plan gates", () => {
  it("a feature below the org's plan is 403 feature_not_available, in the envelope", async () => {
    const res = await get("/engine/v1/probe/goals", lite.license_key)
    expect(res.status).toBe(403)
    expect(res.body).toMatchObject({ code: "feature_not_available", status: 403 })
    expect(res.body.error).toContain("developer")
    expect(res.body.request_id).toBe(res.headers.get("x-request-id"))
  })
  it("the same endpoint serves an org whose plan includes the feature", async () => {
    const res = await get("/engine/v1/probe/goals", developer.license_key)
    expect(res.status).toBe(200)
    expect(res.body).toEqual({ user_id: developer.user_id })
  })
})

describe("deprecation", () => {
  it("an endpoint annotated deprecated answers with a Deprecation header; others do not", async () => {
    const old = await get("/engine/v1/probe/old", lite.license_key)
    expect(old.status).toBe(200)
    expect(old.headers.get("deprecation")).toBe("true")
    const current = await get("/engine/v1/probe/goals", developer.license_key)
    expect(current.headers.get("deprecation")).toBeNull()
  })
})
