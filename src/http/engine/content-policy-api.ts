import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { EngineAuth, Envelope, RequiredFeature } from "../contract.ts"

/**
 * What the adapters must match on the developer's machine for the org's rules (an additive v1
 * extension): the custom patterns of its enabled org policies. The text they are matched against
 * never leaves the machine, so the patterns come to it.
 */
export const ContentPolicy = Schema.Struct({
  custom_patterns: Schema.Array(Schema.Struct({
    kind: Schema.String.annotate({ description: "the kind of a match's finding" }),
    pattern: Schema.String.annotate({ description: "RE2 syntax, matched with an RE2 engine (linear time)" })
  })).annotate({ description: "the custom_patterns of every enabled org_policy of the org and environment, each once" })
})

export class ContentPolicyGroup extends HttpApiGroup.make("contentPolicy")
  .add(
    HttpApiEndpoint.get("contentPolicy", "/content-policy", { success: ContentPolicy })
      .annotate(RequiredFeature, "signals")
      .annotateMerge(OpenApi.annotations({
        description: "Extension: the patterns the adapter matches in prompts, tool inputs and tool outputs for the org's " +
          "rules (org_policy custom_patterns); a match is sent as a finding of the pattern's kind, never the text."
      }))
  )
  .middleware(EngineAuth)
  .middleware(Envelope)
{}
