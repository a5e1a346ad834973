// Scheduled spend reports, on the Channels page: a weekly or monthly summary of the org's spend
// sent to channels when the period ends in the org's time zone. Create, pause or resume, delete.
import { html } from "htm/preact"
import { useState } from "preact/hooks"
import { api, auth, listAll } from "../api.js"
import { time } from "../format.js"
import { Badge, ConfirmButton, ErrorBox, Loaded, Pager, Table, useAction, useLoad, usePages } from "../ui.js"

/** @param {{ tz: string }} props */
export const ReportSchedules = ({ tz }) => {
  const pages = usePages((cursor) => api("GET", "/report-schedules", { query: { cursor } }), [])
  const channels = useLoad(() => listAll("/channels"), [])
  const [creating, setCreating] = useState(false)
  const { error, act } = useAction(pages.reload)
  const names = new Map((channels.data ?? []).map((c) => [c.id, c.name]))
  return html`<section aria-labelledby="reports-title">
    <div class="section-head"><h2 id="reports-title">Scheduled reports</h2>
      ${creating || !auth.may("reportSchedules.create") ? null : html`<button type="button" onClick=${() => setCreating(true)}>New report</button>`}</div>
    <p class="muted">A summary of spend, tokens, the change against the period before and the top users, teams and models,
      sent when a week (from Monday) or a month ends in the org's time zone, ${tz}.</p>
    ${
    creating
      ? html`<${ScheduleForm} channels=${channels.data ?? []} onDone=${() => {
        setCreating(false)
        pages.reload()
      }} />`
      : null
  }
    ${error ? html`<${ErrorBox} error=${error} />` : null}
    <${Loaded} state=${pages}>${(/** @type {any} */ page) =>
    html`
      <${Table}
        rows=${page.data}
        empty="No scheduled reports yet."
        columns=${[
      { label: "Name", cell: (/** @type {any} */ s) => html`<strong>${s.name}</strong><br /><small>${s.period}</small>` },
      { label: "Channels", cell: (/** @type {any} */ s) => s.channels.map((/** @type {string} */ id) => names.get(id) ?? id).join(", ") },
      { label: "Next report", cell: (/** @type {any} */ s) => (s.enabled ? time(s.next_due_at) : "—") },
      { label: "Last sent", cell: (/** @type {any} */ s) => time(s.last_sent_at) },
      {
        label: "State",
        cell: (/** @type {any} */ s) => html`<${Badge} value=${s.enabled ? "scheduled" : "paused"} tone=${s.enabled ? "ok" : ""} />`
      },
      {
        label: "",
        cell: (/** @type {any} */ s) =>
          auth.may("reportSchedules.update") ?
            html`<div class="row">
            <button type="button" onClick=${() => act(() => api("PATCH", `/report-schedules/${s.id}`, { body: { enabled: !s.enabled } }))}>
              ${s.enabled ? "Pause" : "Resume"}</button>
            <${ConfirmButton} label="Delete" confirmLabel="Delete this report?" onConfirm=${() => act(() => api("DELETE", `/report-schedules/${s.id}`))} />
          </div>` :
            null
      }
    ]}
      />
      <${Pager} pages=${pages} label="Scheduled reports" />`}<//>
  </section>`
}

/** @param {{ channels: Array<any>, onDone: () => void }} props */
const ScheduleForm = ({ channels, onDone }) => {
  const [error, setError] = useState(/** @type {string | null} */ (null))
  /** @param {SubmitEvent} e */
  const submit = async (e) => {
    e.preventDefault()
    const f = new FormData(/** @type {HTMLFormElement} */ (e.currentTarget))
    try {
      await api("POST", "/report-schedules", {
        body: { name: String(f.get("name")), period: String(f.get("period")), channels: f.getAll("channel").map(String) }
      })
      onDone()
    } catch (err) {
      setError(/** @type {Error} */ (err).message)
    }
  }
  return html`<form class="panel" onSubmit=${submit} aria-label="New report">
    <h2>New scheduled report</h2>
    ${error ? html`<p class="error" role="alert">The API refused the report: ${error}</p>` : null}
    <label><span>Name</span><input name="name" required maxlength="200" /></label>
    <label><span>Period</span><select name="period">
      <option value="weekly">Weekly (Monday to Monday)</option>
      <option value="monthly">Monthly</option>
    </select></label>
    <fieldset>
      <legend>Send to</legend>
      ${
    channels.length === 0
      ? html`<p class="muted">Create a channel first.</p>`
      : channels.map((c) => html`<label class="check"><input type="checkbox" name="channel" value=${c.id} /><span>${c.name}</span></label>`)
  }
    </fieldset>
    <div class="row"><button type="submit" class="primary">Create report</button><button type="button" onClick=${onDone}>Cancel</button></div>
  </form>`
}
