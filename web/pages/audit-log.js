// The audit log (GET /audit-log): who changed what, when and from where, newest first, with the
// API's filters. A row's "Changes" names the fields that differ; its details show them before
// and after (secrets are "[redacted]" by the service).
import { html } from "htm/preact"
import { api } from "../api.js"
import { shortId, time } from "../format.js"
import { navigate } from "../route.js"
import { Badge, Filters, Loaded, Pager, Table, usePages } from "../ui.js"

const resources = ["org", "user", "team", "project", "api_key", "license_key", "webhook", "channel", "rule"]

const fields = [
  {
    name: "resource_type",
    label: "Resource",
    options: /** @type {Array<[string, string]>} */ ([["", "Any"], ...resources.map((r) => [r, r.replace("_", " ")])])
  },
  { name: "resource_id", label: "Resource id" },
  { name: "action", label: "Action" },
  { name: "actor_id", label: "Changed by (key id)" },
  { name: "from", label: "From", type: "datetime-local" },
  { name: "to", label: "Before", type: "datetime-local" }
]

/** The names of the fields whose values differ. @param {Record<string, unknown> | null} before @param {Record<string, unknown> | null} after */
const changedFields = (before, after) => {
  const names = new Set([...Object.keys(before ?? {}), ...Object.keys(after ?? {})])
  return [...names].filter((n) => JSON.stringify(before?.[n]) !== JSON.stringify(after?.[n])).sort()
}

/** @param {{ entry: any }} props */
const Changes = ({ entry }) => {
  const names = entry.before === null ? ["created"] : entry.after === null ? ["deleted"] : changedFields(entry.before, entry.after)
  return html`<details>
    <summary>${names.length ? names.join(", ") : "no field changed"}</summary>
    <div class="audit-diff">
      <div><h3>Before</h3><pre>${entry.before === null ? "—" : JSON.stringify(entry.before, null, 2)}</pre></div>
      <div><h3>After</h3><pre>${entry.after === null ? "—" : JSON.stringify(entry.after, null, 2)}</pre></div>
    </div>
  </details>`
}

/** @param {{ query: Record<string, string> }} props */
export const AuditLog = ({ query }) => {
  const pages = usePages((cursor) => api("GET", "/audit-log", { query: { ...query, cursor } }), [JSON.stringify(query)])
  return html`<h1>Audit log</h1>
    <p class="muted">Every change made with an API key or here, kept for the service's retention (365 days unless the operator set otherwise).</p>
    <${Filters} fields=${fields} values=${query} onApply=${(/** @type {Record<string, string>} */ q) => navigate("/audit", q)} />
    <${Loaded} state=${pages}>${(/** @type {any} */ page) =>
    html`
      <${Table}
        rows=${page.data}
        empty=${Object.keys(query).length ? "No change matches these filters." : "No changes yet."}
        columns=${[
      { label: "When", cell: (/** @type {any} */ e) => time(e.ts) },
      { label: "Action", cell: (/** @type {any} */ e) => html`<${Badge} value=${e.action} tone="log" />` },
      { label: "Resource", cell: (/** @type {any} */ e) => html`<span title=${e.resource_id ?? ""}>${shortId(e.resource_id)}</span>` },
      { label: "Changes", cell: (/** @type {any} */ e) => html`<${Changes} entry=${e} />` },
      { label: "By", cell: (/** @type {any} */ e) => html`<span title=${e.actor.id}>${shortId(e.actor.id)}</span>` },
      {
        label: "From",
        cell: (/** @type {any} */ e) => html`<span title=${`${e.user_agent ?? ""} · ${e.request_id ?? ""}`}>${e.ip ?? "—"}</span>`
      },
      { label: "Env", cell: (/** @type {any} */ e) => e.environment }
    ]}
      />
      <${Pager} pages=${pages} label="Audit entries" />`}<//>`
}
