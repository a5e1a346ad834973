// Spend by user, team, project or model, today or this month, and the biggest spenders over time.
import { html } from "htm/preact"
import { useState } from "preact/hooks"
import { api, listAll } from "../api.js"
import { TimeChart } from "../chart.js"
import { count, dayKeys, money, startOf, tokens } from "../format.js"
import { userNames, UserName } from "../users.js"
import { Loaded, Table, useLoad } from "../ui.js"

/** @typedef {{ key: string, signals: number, sessions: number, tokens_in: number, tokens_out: number, cost_usd: number, error_count: number }} Group */

const dimensions = /** @type {const} */ (["user", "team", "project", "model"])

/** Spend by one dimension over today or this month. @param {{ tz: string }} props */
export const Breakdown = ({ tz }) => {
  const [by, setBy] = useState(/** @type {typeof dimensions[number]} */ ("user"))
  const [period, setPeriod] = useState(/** @type {"day" | "month"} */ ("day"))
  const state = useLoad(async () => {
    const from = startOf(tz, new Date(), period).toISOString()
    // The API groups by user; a team's share is the sum of its current members'.
    const report = await api("GET", "/usage", { query: { group_by: by === "team" ? "user" : by, from, limit: 100 } })
    if (by !== "team") return report.data
    const teams = await listAll("/teams")
    return teams.map((t) => {
      const members = report.data.filter((/** @type {Group} */ g) => t.member_ids.includes(g.key))
      return members.reduce((/** @type {Group} */ sum, /** @type {Group} */ g) => ({
        ...sum,
        signals: sum.signals + g.signals,
        sessions: sum.sessions + g.sessions,
        tokens_in: sum.tokens_in + g.tokens_in,
        tokens_out: sum.tokens_out + g.tokens_out,
        cost_usd: sum.cost_usd + g.cost_usd,
        error_count: sum.error_count + g.error_count
      }), { key: t.name, signals: 0, sessions: 0, tokens_in: 0, tokens_out: 0, cost_usd: 0, error_count: 0 })
    }).filter((/** @type {Group} */ g) => g.signals > 0).sort((/** @type {Group} */ a, /** @type {Group} */ b) => b.cost_usd - a.cost_usd)
  }, [by, period, tz])
  return html`<section aria-labelledby="breakdown-title">
    <div class="section-head">
      <h2 id="breakdown-title">Spend by ${by}</h2>
      <div class="segmented" role="group" aria-label="Group by">
        ${dimensions.map((d) => html`<button type="button" aria-pressed=${by === d} onClick=${() => setBy(d)}>${d}</button>`)}
      </div>
      <div class="segmented" role="group" aria-label="Period">
        <button type="button" aria-pressed=${period === "day"} onClick=${() => setPeriod("day")}>today</button>
        <button type="button" aria-pressed=${period === "month"} onClick=${() => setPeriod("month")}>this month</button>
      </div>
    </div>
    <${Loaded} state=${state}>${(/** @type {Array<Group>} */ groups) =>
    html`<${Table}
      rows=${groups}
      empty=${`No usage ${period === "day" ? "today" : "this month"} yet.`}
      columns=${[
      {
        label: by[0]?.toUpperCase() + by.slice(1),
        cell: (/** @type {Group} */ g) =>
          html`<span title=${g.key}>${g.key === "" ? "(none)" : by === "user" ? html`<${UserName} id=${g.key} />` : g.key}</span>`
      },
      { label: "Spend", className: "num", cell: (/** @type {Group} */ g) => money(g.cost_usd) },
      { label: "Tokens in", className: "num", cell: (/** @type {Group} */ g) => tokens(g.tokens_in) },
      { label: "Tokens out", className: "num", cell: (/** @type {Group} */ g) => tokens(g.tokens_out) },
      { label: "Sessions", className: "num", cell: (/** @type {Group} */ g) => count(g.sessions) },
      { label: "Errors", className: "num", cell: (/** @type {Group} */ g) => count(g.error_count) }
    ]}
    />`}<//>
    ${
    by === "team"
      ? html`<p class="muted">Teams are not charted over time: the API reports usage by user, and a team's days would take a request per member.</p>`
      : html`<${TopOverTime} by=${by} />`
  }
  </section>`
}

/** The usage API's filter for each dimension. */
const filters = { user: "user_id", project: "project_id", model: "model" }

const palette = ["#2563eb", "#db2777", "#059669", "#d97706", "#7c3aed"]

/**
 * The five biggest spenders of the last 30 days, each as a line of spend per day (one usage
 * report by day per group, filtered to it).
 * @param {{ by: "user" | "project" | "model" }} props
 */
const TopOverTime = ({ by }) => {
  const state = useLoad(async () => {
    const top = (await api("GET", "/usage", { query: { group_by: by, limit: 5 } })).data.filter((/** @type {Group} */ g) => g.key)
    const names = by === "user" ? await userNames() : new Map()
    const reports = await Promise.all(
      top.map((/** @type {Group} */ g) => api("GET", "/usage", { query: { group_by: "day", [filters[by]]: g.key, limit: 100 } }))
    )
    return { top, names, reports }
  }, [by])
  return html`<${Loaded} state=${state}>${(/** @type {any} */ d) => {
    if (d.top.length === 0) return null
    const days = dayKeys(d.reports[0].time_zone, d.reports[0].to)
    return html`<${TimeChart} title=${`Spend per day by ${by}, top ${d.top.length}, last 30 days`} days=${days}
      series=${
      d.top.map((/** @type {Group} */ g, /** @type {number} */ i) => {
        const byDay = new Map(d.reports[i].data.map((/** @type {Group} */ r) => [r.key, r.cost_usd]))
        return { label: d.names.get(g.key) ?? g.key, values: days.map((k) => byDay.get(k) ?? 0), color: palette[i] ?? "#6b7280", scale: "usd", format: money }
      })
    } />`
  }}<//>`
}
