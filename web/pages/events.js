// Events with the API's filters (GET /events): error_only, the signal's type, the verdict's
// action, a finding's kind or any finding.
import { html } from "htm/preact"
import { api } from "../api.js"
import { money, shortId, time, tokens } from "../format.js"
import { hrefOf, navigate } from "../route.js"
import { UserName } from "../users.js"
import { Badge, Filters, Loaded, Pager, Table, usePages } from "../ui.js"

const fields = [
  { name: "session_id", label: "Session id" },
  { name: "user_id", label: "User", type: "user" },
  { name: "project_id", label: "Project id" },
  { name: "model", label: "Model" },
  { name: "adapter", label: "Adapter" },
  { name: "type", label: "Signal type" },
  { name: "from", label: "From", type: "datetime-local" },
  { name: "to", label: "Before", type: "datetime-local" },
  {
    name: "action",
    label: "Verdict",
    options:
      /** @type {Array<[string, string]>} */ ([["", "Any"], ["block", "Blocked"], ["warn", "Warned"], ["notify", "Notified"], ["log", "Logged"], ["redact",
        "Redacted"]])
  },
  { name: "finding", label: "Finding kind" },
  { name: "error_only", label: "Errors only", type: "checkbox" },
  { name: "has_findings", label: "With findings", type: "checkbox" }
]

/** @param {{ query: Record<string, string> }} props */
export const Events = ({ query }) => {
  const pages = usePages((cursor) => api("GET", "/events", { query: { ...query, cursor } }), [JSON.stringify(query)])
  return html`<h1>Events</h1>
    <${Filters} fields=${fields} values=${query} onApply=${(/** @type {Record<string, string>} */ q) => navigate("/events", q)} />
    <${Loaded} state=${pages}>${(/** @type {any} */ page) =>
    html`
      <${Table}
        rows=${page.data}
        empty=${Object.keys(query).length ? "No event matches these filters." : "No events yet."}
        rowClass=${(/** @type {any} */ e) => (e.error_code ? "has-errors" : "")}
        columns=${[
      { label: "When", cell: (/** @type {any} */ e) => time(e.ts) },
      { label: "Type", cell: (/** @type {any} */ e) => e.type },
      { label: "Model", cell: (/** @type {any} */ e) => e.model ?? "—" },
      { label: "User", cell: (/** @type {any} */ e) => html`<${UserName} id=${e.user_id} />` },
      {
        label: "Session",
        cell: (/** @type {any} */ e) => html`<a href=${hrefOf(`/sessions/${e.session_id}`)} title=${e.session_id}>${shortId(e.session_id)}</a>`
      },
      { label: "Tokens", className: "num", cell: (/** @type {any} */ e) => `${tokens(e.tokens_in)} / ${tokens(e.tokens_out)}` },
      { label: "Cost", className: "num", cell: (/** @type {any} */ e) => money(e.cost_usd) },
      { label: "Verdict", cell: (/** @type {any} */ e) => (e.verdict?.action ? html`<${Badge} value=${e.verdict.action} />` : "—") },
      { label: "Findings", cell: (/** @type {any} */ e) => (e.findings ?? []).map((/** @type {any} */ f) => f.kind).join(", ") || "—" },
      { label: "Error", cell: (/** @type {any} */ e) => (e.error_code ? html`<${Badge} value=${e.error_code} tone="error" />` : "—") }
    ]}
      />
      <${Pager} pages=${pages} label="Events" />`}<//>`
}
