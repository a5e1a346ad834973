// Notification channels: chat (Slack, Microsoft Teams, Discord) and e-mail. Create (a chat URL
// is a secret: shown afterwards only as its origin), send a test, re-enable a failing one,
// delete; and which channels the org's admin alerts go to.
import { html } from "htm/preact"
import { useState } from "preact/hooks"
import { api, auth } from "../api.js"
import { Badge, ConfirmButton, ErrorBox, Loaded, Pager, Table, useAction, usePages } from "../ui.js"
import { ReportSchedules } from "./report-schedules.js"

const kinds = [["slack", "Slack (or Mattermost)"], ["teams", "Microsoft Teams"], ["discord", "Discord"], ["email", "E-mail"]]

/** @param {{ org: any, setOrg: (org: any) => void }} props */
export const Channels = ({ org, setOrg }) => {
  const pages = usePages((cursor) => api("GET", "/channels", { query: { cursor } }), [])
  const [creating, setCreating] = useState(false)
  const [outcomes, setOutcomes] = useState(/** @type {Record<string, any>} */ ({}))
  const { error, act } = useAction(pages.reload)
  const alerting = new Set(org.alert_channels ?? [])
  /** @param {any} c */
  const toggleAlerts = (c) =>
    act(async () => {
      const next = alerting.has(c.id) ? [...alerting].filter((id) => id !== c.id) : [...alerting, c.id]
      setOrg(await api("PATCH", "/org", { body: { alert_channels: next } }))
    })
  /** @param {any} c */
  const test = (c) =>
    act(async () => {
      setOutcomes({ ...outcomes, [c.id]: { pending: true } })
      setOutcomes({ ...outcomes, [c.id]: await api("POST", `/channels/${c.id}/test`) })
    })
  return html`<div class="section-head"><h1>Channels</h1>
      ${
    creating || !auth.may("channels.create") ? null : html`<button type="button" class="primary" onClick=${() => setCreating(true)}>New channel</button>`
  }</div>
    <p class="lede">Where notify rules and admin alerts (budgets, anomalies, failing webhooks) reach people.</p>
    ${
    creating
      ? html`<${ChannelForm} onDone=${() => {
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
        empty="No channels yet. Add one to send notify rules and admin alerts to a chat or an inbox."
        rowClass=${(/** @type {any} */ c) => (c.failing ? "failing" : "")}
        columns=${[
      {
        label: "Name",
        cell: (/** @type {any} */ c) =>
          html`<strong>${c.name}</strong><br /><small>${c.kind} · <code>${c.kind === "email" ? c.addresses.join(", ") : c.url}</code></small>`
      },
      { label: "Coalesce", className: "num", cell: (/** @type {any} */ c) => `${c.coalesce_seconds} s` },
      {
        label: "State",
        cell: (/** @type {any} */ c) =>
          c.failing
            ? html`<${Badge} value="failing" tone="exceeded" /><br /><small>messages paused after 5 failed attempts</small>`
            : html`<${Badge} value=${c.enabled ? "sending" : "disabled"} tone=${c.enabled ? "ok" : ""} />`
      },
      {
        label: "Admin alerts",
        cell: (/** @type {any} */ c) =>
          auth.may("org.update")
            ? html`<button type="button" class="toggle" aria-pressed=${alerting.has(c.id)}
              aria-label=${`Admin alerts to ${c.name}`} onClick=${() => toggleAlerts(c)}>${alerting.has(c.id) ? "Sent here" : "Not sent"}</button>`
            : alerting.has(c.id)
            ? "Sent here"
            : "Not sent"
      },
      {
        label: "",
        cell: (/** @type {any} */ c) =>
          html`<div class="row">
              ${
            (c.failing || !c.enabled) && auth.may("channels.update")
              ? html`<button type="button" class="primary" onClick=${() =>
                act(() => api("PATCH", `/channels/${c.id}`, { body: { enabled: true } }))}>Re-enable</button>`
              : null
          }
              ${auth.may("channels.test") ? html`<button type="button" onClick=${() => test(c)}>Send test</button>` : null}
              ${
            auth.may("channels.delete")
              ? html`<${ConfirmButton} label="Delete" confirmLabel="Delete this channel?" onConfirm=${() => act(() => api("DELETE", `/channels/${c.id}`))} />`
              : null
          }
            </div>
            ${outcomes[c.id] ? html`<${TestOutcome} o=${outcomes[c.id]} />` : null}`
      }
    ]}
      />
      <${Pager} pages=${pages} label="Channels" />`}<//>
    <${ReportSchedules} tz=${org.time_zone} />`
}

/** @param {{ o: any }} props */
const TestOutcome = ({ o }) =>
  o.pending
    ? html`<p class="muted" role="status">Sending a test message…</p>`
    : o.delivered
    ? html`<p class="ok" role="status">Test message sent.</p>`
    : html`<p class="bad" role="status">Test message not sent: ${o.error ?? `HTTP ${o.status_code}`}.</p>`

/** @param {{ onDone: () => void }} props */
const ChannelForm = ({ onDone }) => {
  const [kind, setKind] = useState("slack")
  const [error, setError] = useState(/** @type {string | null} */ (null))
  /** @param {SubmitEvent} e */
  const submit = async (e) => {
    e.preventDefault()
    const f = new FormData(/** @type {HTMLFormElement} */ (e.currentTarget))
    const target = kind === "email"
      ? { addresses: String(f.get("addresses")).split(/[\s,]+/).filter((a) => a !== "") }
      : { url: String(f.get("url")) }
    try {
      await api("POST", "/channels", { body: { name: String(f.get("name")), kind, ...target, coalesce_seconds: Number(f.get("coalesce_seconds")) } })
      onDone()
    } catch (err) {
      setError(/** @type {Error} */ (err).message)
    }
  }
  return html`<form class="panel" onSubmit=${submit} aria-label="New channel">
    <h2>New channel</h2>
    ${error ? html`<p class="error" role="alert">The API refused the channel: ${error}</p>` : null}
    <label><span>Name</span><input name="name" required maxlength="200" /></label>
    <label><span>Kind</span><select name="kind" value=${kind} onChange=${(/** @type {any} */ e) => setKind(e.currentTarget.value)}>
      ${kinds.map(([value, label]) => html`<option value=${value}>${label}</option>`)}</select></label>
    ${
    kind === "email"
      ? html`<label><span>Addresses (comma or space separated)</span><input name="addresses" required /></label>`
      : html`<label><span>Incoming-webhook URL (https; kept secret, shown only as its origin)</span><input name="url" type="url" required /></label>`
  }
    <label><span>Coalesce (seconds: a rule firing again within them is summed into one message)</span>
      <input name="coalesce_seconds" type="number" min="1" max="86400" defaultValue="300" required /></label>
    <div class="row"><button type="submit" class="primary">Create channel</button><button type="button" onClick=${onDone}>Cancel</button></div>
  </form>`
}
