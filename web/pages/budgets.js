// Budgets and per-user limits as progress toward their thresholds (GET /budgets): warning from
// 80%, exceeded from 100%, as the engine counts them.
import { html } from "htm/preact"
import { api } from "../api.js"
import { money, tokens } from "../format.js"
import { Badge, Loaded, Pager, Table, usePages } from "../ui.js"

/** @param {string} metric @param {number} n */
const amount = (metric, n) => (metric === "cost_usd" ? money(n) : `${tokens(n)} tokens`)

/** @param {{ b: any }} props */
export const Progress = ({ b }) =>
  html`<div class=${`progress ${b.state}`} role="meter" aria-valuemin="0" aria-valuemax="100" aria-valuenow=${Math.min(b.percent, 100)}
      aria-label=${`${b.name}: ${b.percent}% of the ${b.window} limit`}>
    <div class="bar" style=${`width:${Math.min(b.percent, 100)}%`}></div>
  </div>`

/** @param {{ onlyAlerting?: boolean }} props */
export const Budgets = ({ onlyAlerting = false }) => {
  const pages = usePages((cursor) => api("GET", "/budgets", { query: { limit: 50, cursor } }), [])
  return html`<${Loaded} state=${pages}>${(/** @type {any} */ page) => {
    const rows = page.data.filter((/** @type {any} */ b) => !onlyAlerting || b.state !== "ok")
    return html`<${Table}
      rows=${rows}
      empty=${onlyAlerting ? "No budget or limit is at 80% or more." : "No budgets or per-user limits yet: add a budget or user_limit rule on the Rules page."}
      rowClass=${(/** @type {any} */ b) => `budget-${b.state}`}
      columns=${[
      {
        label: "Budget",
        cell: (/** @type {any} */ b) =>
          html`<strong>${b.name}</strong>${b.enabled ? "" : " (disabled)"}<br /><small>${
            b.type === "user_limit" ? "per user" : b.scope === "org" ? "whole org" : `${b.scope} ${b.scope_id}`
          } · ${b.window}</small>`
      },
      { label: "Used", cell: (/** @type {any} */ b) => html`${amount(b.metric, b.current)} of ${amount(b.metric, b.limit)}<${Progress} b=${b} />` },
      { label: "%", className: "num", cell: (/** @type {any} */ b) => `${b.percent}%` },
      {
        label: "State",
        cell: (/** @type {any} */ b) =>
          html`<${Badge} value=${b.state} />
            ${
            b.type === "user_limit" && (b.users_warning || b.users_exceeded)
              ? html`<br /><small>${b.users_exceeded ?? 0} over, ${b.users_warning ?? 0} near</small>`
              : null
          }`
      }
    ]}
    />
    <${Pager} pages=${pages} label="Budgets" />`
  }}<//>`
}
