// Goals: users' goals with their status and drift (GET /goals), and the goal-drift signals the engine raised.
import { html } from "htm/preact"
import { api } from "../api.js"
import { shortId, time } from "../format.js"
import { hrefOf, navigate } from "../route.js"
import { UserName } from "../users.js"
import { Badge, Filters, Loaded, Pager, Table, usePages } from "../ui.js"

const fields = [
  { name: "user_id", label: "User", type: "user" },
  {
    name: "status",
    label: "Status",
    options: /** @type {Array<[string, string]>} */ ([["", "Any"], ["active", "Active"], ["completed", "Completed"], ["abandoned", "Abandoned"]])
  }
]

/** @param {{ query: Record<string, string> }} props */
export const Goals = ({ query }) => {
  const goals = usePages((cursor) => api("GET", "/goals", { query: { ...query, cursor } }), [JSON.stringify(query)])
  const drift = usePages((cursor) => api("GET", "/events", { query: { type: "goal-drift", user_id: query.user_id, cursor } }), [query.user_id])
  return html`<h1>Goals</h1>
    <${Filters} fields=${fields} values=${query} onApply=${(/** @type {Record<string, string>} */ q) => navigate("/goals", q)} />
    <${Loaded} state=${goals}>${(/** @type {any} */ page) =>
    html`
      <${Table} rows=${page.data} empty="No goals yet: users set them from their coding tools (POST /engine/v1/goals)."
        columns=${[
      { label: "Goal", cell: (/** @type {any} */ g) => g.description },
      {
        label: "User",
        cell: (/** @type {any} */ g) => html`<a href=${hrefOf("/goals", { ...query, user_id: g.user_id })} ><${UserName} id=${g.user_id} /></a>`
      },
      { label: "Status", cell: (/** @type {any} */ g) => html`<${Badge} value=${g.status} tone=${g.status === "active" ? "ok" : ""} />` },
      {
        label: "Drift",
        cell: (/** @type {any} */ g) =>
          g.drift_count
            ? html`<${Badge} value=${`drifted ${g.drift_count}×`} tone="warning" /><br /><small>last ${time(g.last_drift_at)}</small>`
            : "none"
      },
      { label: "Adapter", cell: (/** @type {any} */ g) => g.adapter ?? "—" },
      { label: "Created", cell: (/** @type {any} */ g) => time(g.created_at) },
      { label: "Updated", cell: (/** @type {any} */ g) => time(g.updated_at) }
    ]} />
      <${Pager} pages=${goals} label="Goals" />`}<//>
    <h2>Goal drift</h2>
    <p class="muted">Prompts that kept straying from every active goal raise a goal-drift signal in their session.</p>
    <${Loaded} state=${drift}>${(/** @type {any} */ page) =>
    html`
      <${Table} rows=${page.data} empty="No goal drift detected."
        columns=${[
      { label: "When", cell: (/** @type {any} */ e) => time(e.ts) },
      { label: "User", cell: (/** @type {any} */ e) => html`<${UserName} id=${e.user_id} />` },
      { label: "Session", cell: (/** @type {any} */ e) => html`<a href=${hrefOf(`/sessions/${e.session_id}`)}>${shortId(e.session_id)}</a>` }
    ]} />
      <${Pager} pages=${drift} label="Goal drift" />`}<//>`
}
