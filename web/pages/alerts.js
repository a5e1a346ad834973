// Alerts and warnings: budgets at 80% or over, what the service raised (budget warnings,
// anomalies, rule firings), the admins' alerts (GET /alerts: a failing webhook…), and what warn
// rules said (events whose verdict is warn).
import { html } from "htm/preact"
import { api } from "../api.js"
import { shortId, time } from "../format.js"
import { hrefOf } from "../route.js"
import { UserName } from "../users.js"
import { Badge, Loaded, Pager, Table, usePages } from "../ui.js"
import { Budgets } from "./budgets.js"
import { RaisedEvents } from "./webhook-events.js"

export const Alerts = () => {
  const alerts = usePages((cursor) => api("GET", "/alerts", { query: { cursor } }), [])
  const warnings = usePages((cursor) => api("GET", "/events", { query: { action: "warn", cursor } }), [])
  return html`<h1>Alerts</h1>
    <h2>Budgets and limits at 80% or over</h2>
    <${Budgets} onlyAlerting=${true} />
    <${RaisedEvents} />
    <h2>Admin alerts</h2>
    <${Loaded} state=${alerts}>${(/** @type {any} */ page) =>
    html`
      <${Table} rows=${page.data} empty="No alerts."
        columns=${[
      { label: "When", cell: (/** @type {any} */ a) => time(a.created_at) },
      { label: "Type", cell: (/** @type {any} */ a) => html`<${Badge} value=${a.type} tone="warning" />` },
      {
        label: "Message",
        cell: (/** @type {any} */ a) => html`${a.message}${a.type === "webhook.failing" ? html` <a href=${hrefOf("/webhooks")}>Webhooks →</a>` : null}`
      }
    ]} />
      <${Pager} pages=${alerts} label="Alerts" />`}<//>
    <h2>Warnings from rules</h2>
    <${Loaded} state=${warnings}>${(/** @type {any} */ page) =>
    html`
      <${Table} rows=${page.data} empty="No rule has warned yet."
        columns=${[
      { label: "When", cell: (/** @type {any} */ e) => time(e.ts) },
      { label: "Message", cell: (/** @type {any} */ e) => e.verdict?.message ?? "—" },
      { label: "User", cell: (/** @type {any} */ e) => html`<${UserName} id=${e.user_id} />` },
      { label: "Model", cell: (/** @type {any} */ e) => e.model ?? "—" },
      { label: "Session", cell: (/** @type {any} */ e) => html`<a href=${hrefOf(`/sessions/${e.session_id}`)}>${shortId(e.session_id)}</a>` }
    ]} />
      <${Pager} pages=${warnings} label="Warnings" />`}<//>`
}
