import { Schema } from "effect"
import { HttpApiGroup } from "effect/http-api"
import { AuditEntry } from "../../domain/audit.ts"
import { Environment } from "../../domain/environments.ts"
import { instantParam } from "../query.ts"
import { listEndpoint, managementGroup, requires } from "./endpoints.ts"

const text = (description: string) => Schema.optional(Schema.String.annotate({ description }))

export class AuditLogGroup extends HttpApiGroup.make("auditLog")
  .add(
    listEndpoint("/audit-log", AuditEntry, {
      action: text("only this action, e.g. `rule.update`"),
      resource_type: text("only changes to this kind of resource (`rule`, `api_key`…)"),
      resource_id: text("only changes to this resource"),
      actor_id: text("only changes made by this API key (or person)"),
      environment: Schema.optional(Environment.annotate({ description: "only changes made in this environment (live keys see both)" })),
      from: Schema.optional(instantParam("changes at or after this instant")),
      to: Schema.optional(instantParam("changes before this instant"))
    }).annotateMerge(requires(
      "admin",
      "read",
      "Extension: the org's audit log, newest first: every change made through the management API (and so the " +
        "dashboard), who made it (the API key), the resource's fields before and after (secrets never), when, and from " +
        "where. Entries are never changed or deleted except by the retention (AUDIT_RETENTION_DAYS, default 365). A live " +
        "key sees the changes of both environments, a test key those of the test environment. Each entry is also raised as an " +
        "`audit.recorded` webhook event."
    ))
  )
  .pipe(managementGroup({ title: "Audit log", description: "Who changed what, when and from where" }))
{}
