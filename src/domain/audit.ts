import { Schema } from "effect"
import { Environment } from "./environments.ts"

/**
 * The audit log's model: who changed what, when and from where. An entry is written in the
 * transaction of the change it records (src/http/audit-trail.ts), so neither exists without the
 * other; the fields of the resource before and after are kept with their secrets redacted.
 */

/** The kinds of resource the management API changes, as entries name them. */
export const auditResources = ["org", "user", "team", "project", "api_key", "license_key", "webhook", "channel", "rule", "report_schedule", "sso",
  "fleet_credential"] as const
export type AuditResource = typeof auditResources[number]

/** Who made a change: an API key today; a person once people sign in (SSO). */
export interface AuditActor {
  readonly type: "api_key" | "user"
  readonly id: string
}

/** Where a change came from. */
export interface AuditOrigin {
  readonly ip: string | null
  readonly user_agent: string | null
  readonly request_id: string | null
}

/** What `record` is given: everything but the id and the time, which the store sets. */
export interface AuditRecord {
  readonly orgId: string
  readonly environment: Environment
  readonly actor: AuditActor
  /** `<resource>.<verb>`, e.g. `rule.update`, `api_key.revoke`. */
  readonly action: string
  readonly resource: { readonly type: string; readonly id: string | null }
  readonly before: Readonly<Record<string, unknown>> | null
  readonly after: Readonly<Record<string, unknown>> | null
  readonly origin: AuditOrigin
}

const Fields = Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown))

/** An entry as the API and the `audit.recorded` webhook event show it. */
export const AuditEntry = Schema.Struct({
  id: Schema.String.annotate({ description: "prefix aud_" }),
  ts: Schema.String.annotate({ description: "when the change was made (ISO 8601)" }),
  environment: Environment.annotate({ description: "the environment of the credential that made the change" }),
  actor: Schema.Struct({
    type: Schema.Literals(["api_key", "user"]),
    id: Schema.String.annotate({ description: "the API key's id (key_…), or the person's user id" })
  }),
  action: Schema.String.annotate({ description: "`<resource>.<verb>`, e.g. `rule.create`, `user.update`, `api_key.revoke`" }),
  resource_type: Schema.String.annotate({ description: `the kind of resource: ${auditResources.join(", ")}` }),
  resource_id: Schema.NullOr(Schema.String),
  before: Fields.annotate({ description: "the resource's stored fields before the change (null for a creation); secrets are \"[redacted]\"" }),
  after: Fields.annotate({ description: "its fields after the change (null once deleted); secrets are \"[redacted]\"" }),
  ip: Schema.NullOr(Schema.String).annotate({ description: "the client's address as the service saw it" }),
  user_agent: Schema.NullOr(Schema.String),
  request_id: Schema.NullOr(Schema.String).annotate({ description: "the X-Request-Id of the request that made the change" })
}).annotate({ identifier: "AuditEntry" })
export type AuditEntry = typeof AuditEntry.Type

/**
 * The fields of each resource that hold a secret or what stands for one (a hash, a sealed
 * value): never written to an entry. A new secret column must be added here; the audit test
 * scans every entry for the secrets it created.
 */
export const secretFields: Readonly<Record<AuditResource, ReadonlyArray<string>>> = {
  org: [],
  user: [],
  team: [],
  project: [],
  api_key: ["key", "key_hash"],
  license_key: ["key", "key_hash"],
  webhook: ["secret", "secret_ciphertext"],
  channel: ["url", "url_ciphertext"],
  rule: [],
  report_schedule: [],
  sso: ["client_secret_ciphertext"],
  fleet_credential: ["key", "key_hash"]
}

/** Bookkeeping columns that change without anyone changing the resource (delivery leases). */
const noiseFields: ReadonlyArray<string> = ["leased_until"]

export const redacted = "[redacted]"

/** The fields of a resource as an entry keeps them: secrets replaced by "[redacted]", bookkeeping dropped. */
export const redact = (resource: AuditResource, fields: Readonly<Record<string, unknown>>): Record<string, unknown> => {
  const secrets = secretFields[resource]
  const out: Record<string, unknown> = {}
  for (const [name, value] of Object.entries(fields)) {
    if (noiseFields.includes(name)) continue
    out[name] = secrets.includes(name) && value !== null ? redacted : value
  }
  return out
}

/** The management path's first segment → the resource its writes change. */
const resourceBySegment: Readonly<Record<string, AuditResource>> = {
  org: "org",
  users: "user",
  teams: "team",
  projects: "project",
  "api-keys": "api_key",
  "license-keys": "license_key",
  webhooks: "webhook",
  channels: "channel",
  rules: "rule",
  "report-schedules": "report_schedule",
  sso: "sso",
  "fleet-credentials": "fleet_credential"
}

/** Endpoint names whose verb reads better otherwise in an action. */
const verbs: Readonly<Record<string, string>> = { remove: "delete" }

/**
 * What a write endpoint changes, from its path template (`/api/v1/rules/:id`) and its name
 * (`update`): the resource, the action, and whether the path names the resource (else the
 * answer does, as for a creation). Undefined for a path no resource is known for.
 */
export const auditTargetOf = (
  path: string,
  endpointName: string
): { readonly resource: AuditResource; readonly action: string; readonly idInPath: boolean } | undefined => {
  const segments = path.replace(/^\/api\/v1\//, "").split("/")
  const resource = resourceBySegment[segments[0] ?? ""]
  if (resource === undefined) return undefined
  return { resource, action: `${resource}.${verbs[endpointName] ?? endpointName}`, idInPath: segments[1] === ":id" }
}
