import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { EngineSession, StoredSignal } from "../../domain/activity.ts"
import { NotFound } from "../../domain/errors.ts"
import { EngineAuth, Envelope, PageQuery, RequiredFeature } from "../contract.ts"
import { instantParam } from "../query.ts"

export class EngineSessionsGroup extends HttpApiGroup.make("sessions")
  .add(
    HttpApiEndpoint.get("list", "/sessions", {
      query: {
        limit: PageQuery.limit,
        before: Schema.optional(instantParam("only sessions started before this instant")),
        adapter: Schema.optional(Schema.String.annotate({ description: "only sessions of this adapter" }))
      },
      success: Schema.Struct({ sessions: Schema.Array(EngineSession) })
    })
      .annotate(RequiredFeature, "sessions")
      .annotateMerge(OpenApi.annotations({
        description: "The authenticated user's sessions, newest first. Page back with `before` = the last started_at."
      })),
    HttpApiEndpoint.get("get", "/sessions/:id", {
      params: { id: Schema.String },
      success: Schema.Struct({
        session: EngineSession,
        signals: Schema.Array(StoredSignal).annotate({ description: "all signals of the session, oldest first" })
      }),
      error: NotFound
    })
      .annotate(RequiredFeature, "sessions")
      .annotateMerge(OpenApi.annotations({ description: "One of the authenticated user's sessions with its signals." }))
  )
  .middleware(EngineAuth)
  .middleware(Envelope)
  .annotateMerge(OpenApi.annotations({ title: "Sessions", description: "ended_at is null while a session is open." }))
{}
