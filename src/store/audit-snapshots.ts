import type { SqlClient } from "effect/sql"
import type { AuditResource } from "../domain/audit.ts"

/**
 * A resource's stored fields, as one JSON object, for an audit entry's before and after: the
 * row itself, and what the API shows with it from other tables (a user's teams, a team's
 * members and leads, the org's alert channels). Secrets are taken out by the caller (domain/audit.ts).
 */
const tables: Readonly<Record<AuditResource, string>> = {
  org: "orgs",
  user: "users",
  team: "teams",
  project: "projects",
  api_key: "api_keys",
  license_key: "license_keys",
  webhook: "webhooks",
  channel: "channels",
  rule: "rules",
  report_schedule: "report_schedules",
  sso: "org_sso",
  fleet_credential: "fleet_credentials"
}

const extras: Partial<Record<AuditResource, string>> = {
  org: `jsonb_build_object('alert_channels', COALESCE((SELECT jsonb_agg(channel_id ORDER BY channel_id)
    FROM org_alert_channels WHERE org_id = t.id), '[]'::jsonb))`,
  user: `jsonb_build_object('team_ids', COALESCE((SELECT jsonb_agg(team_id ORDER BY team_id)
    FROM team_members WHERE user_id = t.id), '[]'::jsonb))`,
  team: `jsonb_build_object('member_ids', COALESCE((SELECT jsonb_agg(user_id ORDER BY user_id)
    FROM team_members WHERE team_id = t.id), '[]'::jsonb), 'lead_ids', COALESCE((SELECT jsonb_agg(user_id ORDER BY user_id)
    FROM team_members WHERE team_id = t.id AND lead), '[]'::jsonb))`
}

export const snapshotQuery = (sql: SqlClient.SqlClient, orgId: string, resource: AuditResource, id: string) => {
  const extra = extras[resource]
  const fields = extra === undefined ? "to_jsonb(t)" : `to_jsonb(t) || ${extra}`
  const owned = resource === "org" ? sql`t.id = ${orgId}` : sql`t.org_id = ${orgId}`
  return sql<{ readonly fields: Record<string, unknown> | null }>`
    SELECT ${sql.literal(fields)} AS fields FROM ${sql(tables[resource])} t WHERE t.id = ${id} AND ${owned}`
}
