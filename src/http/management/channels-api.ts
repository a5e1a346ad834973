import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { Channel, ChannelKind, coalesceBounds, maxAddresses } from "../../domain/channels.ts"
import { Conflict, NotFound, Unprocessable } from "../../domain/errors.ts"
import { TestOutcome } from "../../domain/webhooks.ts"
import { getEndpoint, IdParams, listEndpoint, managementGroup, Name, requires } from "./endpoints.ts"

const Url = Schema.String.pipe(Schema.check(Schema.isMinLength(1), Schema.isMaxLength(2048))).annotate({
  description: "chat kinds: the incoming-webhook URL (https; its host must resolve to public addresses only, as for " +
    "webhooks); a secret: stored encrypted, shown redacted to its origin"
})
const Addresses = Schema.Array(Schema.String.pipe(Schema.check(Schema.isMaxLength(320)))).pipe(
  Schema.check(Schema.isMaxLength(100))
).annotate({ description: `email: 1 to ${maxAddresses} recipient addresses` })
// Ranges are checked by the repository, so that a value out of range is a 422 rather than a 400.
const CoalesceSeconds = Schema.Int.annotate({
  description: `${coalesceBounds.minimum} to ${coalesceBounds.maximum} (default ${coalesceBounds.default}): firings of a ` +
    "rule for one user (or anomalies of one kind for one user) within a window of this length make one message at the " +
    "first and one summary, with their count, when the window ends"
})

const CreateChannel = Schema.Struct({
  name: Name,
  kind: ChannelKind,
  url: Schema.optionalKey(Url),
  addresses: Schema.optionalKey(Addresses),
  coalesce_seconds: Schema.optionalKey(CoalesceSeconds)
})

const UpdateChannel = Schema.Struct({
  name: Schema.optionalKey(Name),
  url: Schema.optionalKey(Url),
  addresses: Schema.optionalKey(Addresses),
  coalesce_seconds: Schema.optionalKey(CoalesceSeconds),
  enabled: Schema.optionalKey(Schema.Boolean.annotate({
    description: "false: nothing is enqueued for the channel; true: also clears `failing` and sends what queued meanwhile"
  }))
}).annotate({ description: "only the fields sent change; the kind cannot change; unknown fields are rejected (400)" })

const unprocessable = "422 codes: validation_error, url_not_allowed (the webhooks' SSRF policy), smtp_not_configured " +
  "(an email channel while the operator has not set SMTP_URL)."

export class ChannelsGroup extends HttpApiGroup.make("channels")
  .add(
    listEndpoint("/channels", Channel).annotateMerge(requires("webhooks", "read")),
    HttpApiEndpoint.post("create", "/channels", {
      payload: CreateChannel,
      success: Channel.pipe(HttpApiSchema.status(201)),
      error: Unprocessable
    }).annotateMerge(requires(
      "webhooks",
      "write",
      "Creates a notification channel of the key's environment: a chat incoming webhook (`url`) or e-mail " +
        `recipients (\`addresses\`). ${unprocessable}`
    )),
    getEndpoint("/channels/:id", Channel).annotateMerge(requires("webhooks", "read")),
    HttpApiEndpoint.patch("update", "/channels/:id", {
      params: IdParams,
      payload: UpdateChannel,
      success: Channel,
      error: [NotFound, Unprocessable]
    }).annotateMerge(requires("webhooks", "write", `Changes a channel; \`enabled: true\` re-enables a failing one. ${unprocessable}`)),
    HttpApiEndpoint.delete("delete", "/channels/:id", { params: IdParams, success: HttpApiSchema.NoContent, error: [NotFound, Conflict] })
      .annotateMerge(requires(
        "webhooks",
        "write",
        "Deletes the channel with its queued messages, and takes it out of the org's alert_channels. " +
          "409 channel_in_use while a rule's action_config.channels names it."
      )),
    HttpApiEndpoint.post("test", "/channels/:id/test", { params: IdParams, success: TestOutcome, error: NotFound })
      .annotateMerge(requires(
        "webhooks",
        "write",
        "Sends a test message to the channel now (once, not retried, not queued; the URL policy applies) and " +
          "answers the outcome. status_code is the chat service's HTTP status; null for e-mail."
      ))
  )
  .pipe(managementGroup({
    title: "Notification channels",
    description: "Where messages for people go: Slack (and compatible), Microsoft Teams and Discord incoming webhooks, and " +
      "e-mail. A notify rule names its channels in action_config.channels; the org's alert_channels (PATCH /org) get " +
      "budget warnings and exceeded, anomalies, and failing webhooks and channels. Delivery, retries and the failing " +
      "state are the webhooks' (30 s, 5 min, 30 min, 2 h; failing after 5 attempts, with an alert)."
  }))
{}
