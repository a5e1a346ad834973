import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema } from "effect/http-api"
import { NotFound, Unprocessable } from "../../domain/errors.ts"
import { WebhookEventType } from "../../domain/notices.ts"
import { Alert, RaisedEvent, TestOutcome, Webhook, WebhookDelivery } from "../../domain/webhooks.ts"
import { PageQuery, pageOf } from "../contract.ts"
import { IdParams, listEndpoint, managementGroup, requires } from "./endpoints.ts"

const CreateWebhook = Schema.Struct({
  url: Schema.String.pipe(Schema.check(Schema.isMinLength(1), Schema.isMaxLength(2048))).annotate({
    description: "https URL that receives the POSTs; its host must resolve to public addresses only"
  }),
  events: Schema.Array(Schema.String).pipe(Schema.check(Schema.isMaxLength(20))).annotate({
    description: "event names (session.started, session.ended, budget.exceeded, budget.warning, rule.triggered, anomaly.detected); unknown names are 422"
  }),
  secret: Schema.String.pipe(Schema.check(Schema.isMaxLength(1024))).annotate({
    description: "at least 32 characters; signs every delivery (X-Service-Signature); stored encrypted, never returned"
  })
})

export class WebhooksGroup extends HttpApiGroup.make("webhooks")
  .add(
    listEndpoint("/webhooks", Webhook).annotateMerge(requires("webhooks", "read")),
    HttpApiEndpoint.post("create", "/webhooks", {
      payload: CreateWebhook,
      success: Webhook.pipe(HttpApiSchema.status(201)),
      error: Unprocessable
    }).annotateMerge(requires(
      "webhooks",
      "write",
      "Registers a webhook. 422 codes: unknown_event, secret_too_short, url_not_allowed, validation_error."
    )),
    HttpApiEndpoint.delete("delete", "/webhooks/:id", { params: IdParams, success: HttpApiSchema.NoContent, error: NotFound })
      .annotateMerge(requires("webhooks", "write", "Deletes the webhook; nothing more is delivered to it.")),
    HttpApiEndpoint.post("test", "/webhooks/:id/test", { params: IdParams, success: TestOutcome, error: NotFound })
      .annotateMerge(requires(
        "webhooks",
        "write",
        "Delivers a signed test session.started event now (once, not retried, not queued) and answers the outcome."
      )),
    HttpApiEndpoint.get("deliveries", "/webhooks/:id/deliveries", {
      params: IdParams,
      query: PageQuery,
      success: pageOf(WebhookDelivery),
      error: NotFound
    }).annotateMerge(requires(
      "webhooks",
      "read",
      "Extension: the events queued for this webhook, newest first, each with its status and every attempt " +
        "(status code or error, and when the next one is due)."
    )),
    HttpApiEndpoint.post("enable", "/webhooks/:id/enable", { params: IdParams, success: Webhook, error: NotFound })
      .annotateMerge(requires(
        "webhooks",
        "write",
        "Re-enables a failing webhook: clears `failing` and resumes delivery of what queued meanwhile, oldest first."
      ))
  )
  .pipe(managementGroup({
    title: "Webhooks",
    description: "Signed event notifications (spec §6). Each delivery is a POST of the JSON envelope {id, type, org_id, ts, data} " +
      "with X-Service-Signature: sha256=<hex HMAC-SHA256 of the body keyed with the secret>; the payload shapes are in " +
      "schemas/webhook-payloads.schema.json. Retries: 30 s, 5 min, 30 min, 2 h; after 5 failed attempts the webhook is failing."
  }))
{}

export class AlertsGroup extends HttpApiGroup.make("alerts")
  .add(
    listEndpoint("/alerts", Alert).annotateMerge(requires("admin", "read"))
  )
  .pipe(managementGroup({
    title: "Alerts",
    description: "Alerts for the org's admins, newest first: webhook.failing when a webhook's deliveries are paused, " +
      "channel.failing when a notification channel's messages are. Each is also sent to the org's alert_channels (PATCH /org)."
  }))
{}

export class WebhookEventsGroup extends HttpApiGroup.make("webhookEvents")
  .add(
    listEndpoint("/webhook-events", RaisedEvent, {
      type: Schema.optional(WebhookEventType.annotate({ description: "only events of this type" }))
    }).annotateMerge(requires(
      "webhooks",
      "read",
      "Extension: the events the service raised for the org (what webhooks are sent: budget warnings, " +
        "budgets exceeded, anomalies, rule firings, sessions), newest first, whether or not a webhook subscribes."
    ))
  )
  .pipe(managementGroup({
    title: "Webhook events",
    description: "The webhook events of the org, readable without a webhook (the dashboard's alerts)."
  }))
{}
