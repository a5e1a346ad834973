// What the service raised (GET /webhook-events: the events webhooks are sent), whether or not a
// webhook subscribes: budget warnings and overruns, anomalies, rule firings.
import { html } from "htm/preact"
import { useState } from "preact/hooks"
import { api } from "../api.js"
import { money, shortId, time, tokens } from "../format.js"
import { hrefOf } from "../route.js"
import { UserName } from "../users.js"
import { Badge, Loaded, Pager, Table, useLoad, usePages } from "../ui.js"

const alerting = ["budget.warning", "budget.exceeded", "anomaly.detected", "rule.triggered"]
const choices = /** @type {Array<[string, string]>} */ ([
  ["", "Budgets, anomalies and rules"],
  ["budget.warning", "Budget warnings (80%)"],
  ["budget.exceeded", "Budgets exceeded"],
  ["anomaly.detected", "Anomalies"],
  ["rule.triggered", "Rule firings"],
  ["session.started", "Sessions started"],
  ["session.ended", "Sessions ended"]
])
const tones = /** @type {Record<string, string>} */ ({
  "budget.warning": "warning",
  "budget.exceeded": "exceeded",
  "anomaly.detected": "warning",
  "rule.triggered": "notify"
})

/** @param {string} metric @param {number} n */
const amount = (metric, n) => (metric === "cost_usd" ? money(n) : `${tokens(n)} tokens`)

/** @param {{ n: any }} props */
const Summary = ({ n }) => {
  const d = n.data
  const session = d.session_id ? html` · <a href=${hrefOf(`/sessions/${d.session_id}`)}>${shortId(d.session_id)}</a>` : null
  const user = d.user_id ? html` · <${UserName} id=${d.user_id} />` : null
  switch (n.type) {
    case "budget.warning":
    case "budget.exceeded":
      return html`<strong>${d.rule_name}</strong>: ${amount(d.metric, d.current)} of ${amount(d.metric, d.threshold)} (${d.window}, ${d.scope})`
    case "anomaly.detected":
      return html`<strong>${d.anomaly_type}</strong>: ${tokens(d.observed)} tokens against a baseline of ${tokens(Math.round(d.baseline_avg))} (+${
        Math.round(d.deviation_pct)
      }%)${user}${session}`
    case "rule.triggered":
      return html`<strong>${d.rule_name}</strong> → ${d.action}${d.model ? ` on ${d.model}` : ""}${user}${session}`
    default:
      return html`${user}${session}`
  }
}

const columns = [
  { label: "When", cell: (/** @type {any} */ n) => time(n.ts) },
  { label: "Event", cell: (/** @type {any} */ n) => html`<${Badge} value=${n.type} tone=${tones[n.type] ?? ""} />` },
  { label: "What", cell: (/** @type {any} */ n) => html`<${Summary} n=${n} />` }
]

export const RaisedEvents = () => {
  const [type, setType] = useState("")
  return html`<div class="section-head">
      <h2 id="raised">Raised by the service</h2>
      <label class="inline-select"><span>Show</span>
        <select value=${type} onChange=${(/** @type {any} */ e) => setType(e.currentTarget.value)}>
          ${choices.map(([v, l]) => html`<option value=${v}>${l}</option>`)}
        </select></label>
    </div>
    ${type === "" ? html`<${Latest} />` : html`<${OfType} key=${type} type=${type} />`}`
}

/** The latest of each alerting type together (the API lists one type, or all, at a time). */
const Latest = () => {
  const state = useLoad(async () => {
    const pages = await Promise.all(alerting.map((t) => api("GET", "/webhook-events", { query: { type: t, limit: 10 } })))
    return pages.flatMap((p) => p.data).sort((a, b) => b.ts.localeCompare(a.ts)).slice(0, 20)
  }, [])
  return html`<${Loaded} state=${state}>${(/** @type {Array<any>} */ rows) =>
    html`
    <${Table} rows=${rows} columns=${columns} empty="Nothing raised yet: budget warnings, anomalies and rule firings appear here." />`}<//>`
}

/** @param {{ type: string }} props */
const OfType = ({ type }) => {
  const pages = usePages((cursor) => api("GET", "/webhook-events", { query: { type, cursor } }), [type])
  return html`<${Loaded} state=${pages}>${(/** @type {any} */ page) =>
    html`
    <${Table} rows=${page.data} columns=${columns} empty="None of these yet." />
    <${Pager} pages=${pages} label="Raised events" />`}<//>`
}
