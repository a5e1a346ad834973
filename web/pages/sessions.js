// Sessions with the API's filters (GET /sessions), newest first unless asked otherwise.
import { html } from "htm/preact"
import { api } from "../api.js"
import { count, duration, money, shortId, time, tokens } from "../format.js"
import { hrefOf, navigate } from "../route.js"
import { UserName } from "../users.js"
import { Badge, Filters, Loaded, Pager, Table, usePages } from "../ui.js"

const fields = [
  { name: "user_id", label: "User", type: "user" },
  { name: "project_id", label: "Project id" },
  { name: "model", label: "Primary model" },
  { name: "adapter", label: "Adapter" },
  { name: "from", label: "Started from", type: "datetime-local" },
  { name: "to", label: "Started before", type: "datetime-local" },
  { name: "order", label: "Order", options: /** @type {Array<[string, string]>} */ ([["", "Newest first"], ["asc", "Oldest first"]]) }
]

/** @param {{ query: Record<string, string> }} props */
export const Sessions = ({ query }) => {
  const pages = usePages((cursor) => api("GET", "/sessions", { query: { ...query, cursor } }), [JSON.stringify(query)])
  return html`<h1>Sessions</h1>
    <${Filters} fields=${fields} values=${query} onApply=${(/** @type {Record<string, string>} */ q) => navigate("/sessions", q)} />
    <${Loaded} state=${pages}>${(/** @type {any} */ page) =>
    html`
      <p class="count">${count(page.total)} session${page.total === 1 ? "" : "s"}</p>
      <${Table}
        rows=${page.data}
        empty=${Object.keys(query).length ? "No session matches these filters." : "No sessions yet: they appear once an adapter sends signals."}
        rowClass=${(/** @type {any} */ s) => (s.error_count > 0 ? "has-errors" : "")}
        columns=${[
      { label: "Session", cell: (/** @type {any} */ s) => html`<a href=${hrefOf(`/sessions/${s.id}`)} title=${s.id}>${shortId(s.id)}</a>` },
      { label: "Started", cell: (/** @type {any} */ s) => time(s.started_at) },
      { label: "User", cell: (/** @type {any} */ s) => html`<${UserName} id=${s.user_id} />` },
      { label: "Adapter", cell: (/** @type {any} */ s) => s.adapter },
      { label: "Model", cell: (/** @type {any} */ s) => s.model ?? "—" },
      { label: "Duration", className: "num", cell: (/** @type {any} */ s) => duration(s.duration_s) },
      { label: "Tokens", className: "num", cell: (/** @type {any} */ s) => tokens(s.tokens_in + s.tokens_out) },
      { label: "Cost", className: "num", cell: (/** @type {any} */ s) => money(s.cost_usd) },
      { label: "Signals", className: "num", cell: (/** @type {any} */ s) => count(s.signal_count) },
      { label: "Errors", className: "num", cell: (/** @type {any} */ s) => (s.error_count ? html`<strong class="bad">${s.error_count}</strong>` : "0") },
      { label: "Status", cell: (/** @type {any} */ s) => html`<${Badge} value=${s.status} />` }
    ]}
      />
      <${Pager} pages=${pages} label="Sessions" />`}<//>`
}
