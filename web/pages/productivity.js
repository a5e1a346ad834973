// The coding tools' own productivity counters (lines, commits, pull requests, edits), exported
// over OTLP, beside spend, per user or team over today, this month or the last 30 days.
import { html } from "htm/preact"
import { useState } from "preact/hooks"
import { api } from "../api.js"
import { count, money, startOf, tokens } from "../format.js"
import { Loaded, Pager, Table, usePages } from "../ui.js"

/** @typedef {{ key: string, name: string, lines_added: number, lines_removed: number, commits: number, pull_requests: number, edits_accepted: number, edits_rejected: number, cost_usd: number, tokens_in: number, tokens_out: number, sessions: number }} Figures */

const periods = /** @type {const} */ (["day", "month", "30 days"])

/** @param {{ org: { time_zone: string } }} props */
export const Productivity = ({ org }) => {
  const [by, setBy] = useState(/** @type {"user" | "team"} */ ("user"))
  const [period, setPeriod] = useState(/** @type {typeof periods[number]} */ ("30 days"))
  const from = period === "30 days" ? undefined : startOf(org.time_zone, new Date(), period).toISOString()
  const pages = usePages((cursor) => api("GET", "/productivity", { query: { group_by: by, from, cursor } }), [by, period])
  return html`<h1>Productivity</h1>
    <p class="muted">What the coding tools report of their own work (Claude Code's and Gemini CLI's OpenTelemetry counters), beside what it cost.</p>
    <div class="section-head">
      <div class="segmented" role="group" aria-label="Group by">
        ${(/** @type {const} */ (["user", "team"])).map((d) => html`<button type="button" aria-pressed=${by === d} onClick=${() => setBy(d)}>${d}</button>`)}
      </div>
      <div class="segmented" role="group" aria-label="Period">
        ${
    periods.map((p) =>
      html`<button type="button" aria-pressed=${period === p} onClick=${() => setPeriod(p)}>${
        p === "day" ? "today" : p === "month" ? "this month" : "last 30 days"
      }</button>`
    )
  }
      </div>
    </div>
    <${Loaded} state=${pages}>${(/** @type {{ data: Array<Figures>, totals: Figures }} */ page) =>
    html`<${Table}
      rows=${page.data}
      caption=${`All users: ${count(page.totals.lines_added)} lines added, ${count(page.totals.commits)} commits, ${money(page.totals.cost_usd)}`}
      empty="Nothing reported in this period."
      columns=${[
      { label: by === "user" ? "User" : "Team", cell: (/** @type {Figures} */ g) => html`<span title=${g.key}>${g.name}</span>` },
      { label: "Lines added", className: "num", cell: (/** @type {Figures} */ g) => count(g.lines_added) },
      { label: "Lines removed", className: "num", cell: (/** @type {Figures} */ g) => count(g.lines_removed) },
      { label: "Commits", className: "num", cell: (/** @type {Figures} */ g) => count(g.commits) },
      { label: "Pull requests", className: "num", cell: (/** @type {Figures} */ g) => count(g.pull_requests) },
      { label: "Edits accepted", className: "num", cell: (/** @type {Figures} */ g) => count(g.edits_accepted) },
      { label: "Edits rejected", className: "num", cell: (/** @type {Figures} */ g) => count(g.edits_rejected) },
      { label: "Spend", className: "num", cell: (/** @type {Figures} */ g) => money(g.cost_usd) },
      { label: "Tokens", className: "num", cell: (/** @type {Figures} */ g) => tokens(g.tokens_in + g.tokens_out) },
      { label: "Sessions", className: "num", cell: (/** @type {Figures} */ g) => count(g.sessions) }
    ]}
    />
    <${Pager} pages=${pages} label="Productivity" />`}<//>`
}
