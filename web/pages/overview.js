// Overview: spend and tokens today and this month, by user, team, project and model; the last
// 30 days as charts; a usage download; budgets toward their thresholds; the latest blocks and warnings.
import { html } from "htm/preact"
import { api, auth } from "../api.js"
import { TimeChart } from "../chart.js"
import { count, dayKey, dayKeys, money, shortId, startOf, time, tokens } from "../format.js"
import { hrefOf } from "../route.js"
import { Badge, Loaded, Table, useLoad } from "../ui.js"
import { Breakdown } from "./breakdown.js"
import { Budgets } from "./budgets.js"
import { UnknownIdentities } from "./unknown-identities.js"
import { UsageExport } from "./usage-export.js"

/** @typedef {{ key: string, signals: number, sessions: number, tokens_in: number, tokens_out: number, cost_usd: number, error_count: number }} Group */

/** @param {{ org: any }} props */
export const Overview = ({ org }) => {
  const tz = org.time_zone
  const days = useLoad(() => api("GET", "/usage", { query: { group_by: "day", limit: 100 } }), [])
  const month = useLoad(() => api("GET", "/usage", { query: { group_by: "day", from: startOf(tz, new Date(), "month").toISOString(), limit: 100 } }), [tz])
  return html`<h1>Overview</h1>
    <p class="lede">Times are counted in the org's time zone, ${tz}.</p>
    ${auth.may("fleet.unknownIdentities") ? html`<${UnknownIdentities} />` : null}
    <${Loaded} state=${month}>${(/** @type {any} */ report) => {
    const today = report.data.find((/** @type {Group} */ d) => d.key === dayKey(tz))
    return html`<section class="cards" aria-label="Totals">
        <${Card} label="Spend today" value=${money(today?.cost_usd ?? 0)} />
        <${Card} label="Tokens today" value=${tokens((today?.tokens_in ?? 0) + (today?.tokens_out ?? 0))} />
        <${Card} label="Spend this month" value=${money(report.totals.cost_usd)} />
        <${Card} label="Tokens this month" value=${tokens(report.totals.tokens_in + report.totals.tokens_out)} />
        <${Card} label="Sessions this month" value=${count(report.totals.sessions)} />
        <${Card} label="Errors this month" value=${count(report.totals.error_count)} />
        <a class="card" href=${hrefOf("/events", { has_findings: "true" })} title="Events with findings">
          <span>Secrets found this month</span><strong>${count(report.totals.secret_findings ?? 0)}</strong>
        </a>
      </section>`
  }}<//>
    <${Loaded} state=${days}>${(/** @type {any} */ report) => {
    // Every day of the range, oldest first, days without activity as zero.
    const byDay = new Map(report.data.map((/** @type {Group} */ d) => [d.key, d]))
    const keys = dayKeys(tz, report.to)
    const series = keys.map((key) => byDay.get(key) ?? { key, signals: 0, sessions: 0, tokens_in: 0, tokens_out: 0, cost_usd: 0, error_count: 0 })
    if (report.data.length === 0) return html`<p class="empty">No activity in the last 30 days yet: once adapters send signals, spend and tokens show here.</p>`
    return html`<section class="charts">
        <${TimeChart} title="Spend per day, last 30 days" days=${series.map((/** @type {Group} */ d) => d.key)}
          series=${[{ label: "Spend", values: series.map((/** @type {Group} */ d) => d.cost_usd), color: "#2563eb", scale: "usd", format: money }]} />
        <${TimeChart} title="Tokens per day, last 30 days" days=${series.map((/** @type {Group} */ d) => d.key)}
          series=${[
      { label: "Tokens in", values: series.map((/** @type {Group} */ d) => d.tokens_in), color: "#7c3aed", scale: "tok", format: tokens },
      { label: "Tokens out", values: series.map((/** @type {Group} */ d) => d.tokens_out), color: "#059669", scale: "tok", format: tokens }
    ]} />
      </section>`
  }}<//>
    <${Breakdown} tz=${tz} />
    <${UsageExport} tz=${tz} />
    ${auth.may("budgets.list") ? html`<h2>Budgets and limits</h2><${Budgets} />` : null}
    <h2>Recent blocks and warnings</h2>
    <${RecentVerdicts} />`
}

/** @param {{ label: string, value: string }} props */
const Card = ({ label, value }) => html`<div class="card"><span>${label}</span><strong>${value}</strong></div>`

/** The latest events a rule blocked or warned about. */
const RecentVerdicts = () => {
  const state = useLoad(async () => {
    const [blocks, warnings] = await Promise.all([
      api("GET", "/events", { query: { action: "block", limit: 5 } }),
      api("GET", "/events", { query: { action: "warn", limit: 5 } })
    ])
    return [...blocks.data, ...warnings.data].sort((a, b) => b.ts.localeCompare(a.ts))
  }, [])
  return html`<${Loaded} state=${state}>${(/** @type {Array<any>} */ events) =>
    html`<${Table}
    rows=${events}
    empty="No blocks or warnings yet."
    columns=${[
      { label: "When", cell: (/** @type {any} */ e) => time(e.ts) },
      { label: "Verdict", cell: (/** @type {any} */ e) => html`<${Badge} value=${e.verdict.action} />` },
      { label: "Message", cell: (/** @type {any} */ e) => e.verdict.message ?? "—" },
      { label: "Model", cell: (/** @type {any} */ e) => e.model ?? "—" },
      { label: "Session", cell: (/** @type {any} */ e) => html`<a href=${hrefOf(`/sessions/${e.session_id}`)}>${shortId(e.session_id)}</a>` }
    ]}
  />`}<//>`
}
