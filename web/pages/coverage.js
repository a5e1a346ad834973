// Coverage: how each user is seen (hook adapters, the tools' own telemetry, both or neither), and
// whose tools stopped reporting for N days.
import { html } from "htm/preact"
import { api } from "../api.js"
import { count, time } from "../format.js"
import { hrefOf, navigate } from "../route.js"
import { Badge, Loaded, Pager, Table, usePages } from "../ui.js"

/** @typedef {{ user_id: string, email: string, name: string, last_hook_at: string | null, last_telemetry_at: string | null, seen_through: string, stopped_reporting: boolean }} Seen */

const sources = ["", "hooks", "telemetry", "both", "none"]

/** The totals in a sentence (one string: markup would fold its line breaks away). @param {Record<string, number>} t */
const summary = (t) =>
  `${count(t.users ?? 0)} users: ${count(t.hooks ?? 0)} through hooks only, ${count(t.telemetry ?? 0)} through telemetry only, ` +
  `${count(t.both ?? 0)} through both, ${count(t.none ?? 0)} never seen; ${count(t.stopped_reporting ?? 0)} stopped reporting.`

/** @param {{ query: Record<string, string> }} props */
export const Coverage = ({ query }) => {
  const days = query.days ?? "7"
  const seen = query.seen_through ?? ""
  const pages = usePages(
    (cursor) => api("GET", "/coverage", { query: { stale_after_days: days, seen_through: seen || undefined, cursor } }),
    [days, seen]
  )
  /** @param {SubmitEvent} e */
  const apply = (e) => {
    e.preventDefault()
    const form = /** @type {HTMLFormElement} */ (e.currentTarget)
    const value = (/** @type {string} */ name) => /** @type {HTMLInputElement} */ (form.elements.namedItem(name)).value
    navigate("/coverage", { days: value("days"), seen_through: value("seen_through") })
  }
  return html`<h1>Coverage</h1>
    <form class="filters" aria-label="Filters" onSubmit=${apply}>
      <label><span>Seen through</span><select name="seen_through" value=${seen}>
        ${sources.map((s) => html`<option value=${s} selected=${s === seen}>${s || "any"}</option>`)}
      </select></label>
      <label><span>Stopped after (days)</span><input name="days" type="number" min="1" max="999" value=${days} /></label>
      <button type="submit">Apply</button>
    </form>
    <${Loaded} state=${pages}>${(/** @type {{ data: Array<Seen>, totals: Record<string, number> }} */ page) =>
    html`<p class="summary">${summary(page.totals)}</p>
    <${Table} rows=${page.data} empty="No users match."
      columns=${[
      { label: "User", cell: (/** @type {Seen} */ u) => html`<a href=${hrefOf("/sessions", { user_id: u.user_id })} title=${u.email}>${u.name}</a>` },
      {
        label: "Seen through",
        cell: (/** @type {Seen} */ u) => html`<${Badge} value=${u.seen_through} tone=${u.seen_through === "none" ? "warning" : "ok"} />`
      },
      { label: "Last hook signal", cell: (/** @type {Seen} */ u) => time(u.last_hook_at) },
      { label: "Last telemetry", cell: (/** @type {Seen} */ u) => time(u.last_telemetry_at) },
      {
        label: "Reporting",
        cell: (/** @type {Seen} */ u) => u.stopped_reporting ? html`<${Badge} value="stopped" tone="error" />` : u.seen_through === "none" ? "—" : "yes"
      }
    ]} />
    <${Pager} pages=${pages} label="Coverage" />`}<//>`
}
