// Webhooks: create (the secret is entered once and never shown again), send a test, delete,
// and re-enable one that is failing (its deliveries paused after 5 failed attempts).
import { html } from "htm/preact"
import { useState } from "preact/hooks"
import { api, auth } from "../api.js"
import { time } from "../format.js"
import { Badge, ConfirmButton, ErrorBox, Loaded, Pager, Table, useAction, usePages } from "../ui.js"
import { Deliveries } from "./webhook-deliveries.js"

const eventNames = ["session.started", "session.ended", "budget.exceeded", "budget.warning", "rule.triggered", "anomaly.detected"]

export const Webhooks = () => {
  const pages = usePages((cursor) => api("GET", "/webhooks", { query: { cursor } }), [])
  const [creating, setCreating] = useState(false)
  const [outcomes, setOutcomes] = useState(/** @type {Record<string, any>} */ ({}))
  const [open, setOpen] = useState(/** @type {string | null} */ (null))
  const { error, act } = useAction(pages.reload)
  /** @param {any} w */
  const test = (w) =>
    act(async () => {
      setOutcomes({ ...outcomes, [w.id]: { pending: true } })
      setOutcomes({ ...outcomes, [w.id]: await api("POST", `/webhooks/${w.id}/test`) })
    })
  return html`<div class="section-head"><h1>Webhooks</h1>
      ${
    creating || !auth.may("webhooks.create") ? null : html`<button type="button" class="primary" onClick=${() => setCreating(true)}>New webhook</button>`
  }</div>
    ${
    creating
      ? html`<${WebhookForm} onDone=${() => {
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
        empty="No webhooks yet. Add one to get signed notifications of sessions, budgets, rules and anomalies."
        rowClass=${(/** @type {any} */ w) => (w.failing ? "failing" : "")}
        columns=${[
      { label: "URL", cell: (/** @type {any} */ w) => html`<code>${w.url}</code><br /><small>created ${time(w.created_at)}</small>` },
      { label: "Events", cell: (/** @type {any} */ w) => html`<small>${w.events.join(", ")}</small>` },
      {
        label: "State",
        cell: (/** @type {any} */ w) =>
          w.failing
            ? html`<${Badge} value="failing" tone="exceeded" /><br /><small>deliveries paused after 5 failed attempts</small>`
            : html`<${Badge} value=${w.enabled ? "delivering" : "disabled"} tone=${w.enabled ? "ok" : ""} />`
      },
      {
        label: "",
        cell: (/** @type {any} */ w) =>
          html`<div class="row">
              ${
            w.failing && auth.may("webhooks.enable")
              ? html`<button type="button" class="primary" onClick=${() => act(() => api("POST", `/webhooks/${w.id}/enable`))}>Re-enable</button>`
              : null
          }
              ${auth.may("webhooks.test") ? html`<button type="button" onClick=${() => test(w)}>Send test</button>` : null}
              <button type="button" aria-expanded=${open === w.id} onClick=${() => setOpen(open === w.id ? null : w.id)}>Deliveries</button>
              ${
            auth.may("webhooks.delete")
              ? html`<${ConfirmButton} label="Delete" confirmLabel="Delete this webhook?" onConfirm=${() => act(() => api("DELETE", `/webhooks/${w.id}`))} />`
              : null
          }
            </div>
            ${outcomes[w.id] ? html`<${TestOutcome} o=${outcomes[w.id]} />` : null}`
      }
    ]}
      />
      ${
      open ?
        html`<h2>Recent deliveries of <code>${page.data.find((/** @type {any} */ w) => w.id === open)?.url ?? open}</code></h2>
        <${Deliveries} key=${open} webhookId=${open} />` :
        null
    }
      <${Pager} pages=${pages} label="Webhooks" />`}<//>`
}

/** @param {{ o: any }} props */
const TestOutcome = ({ o }) =>
  o.pending
    ? html`<p class="muted" role="status">Sending a test session.started…</p>`
    : o.delivered
    ? html`<p class="ok" role="status">Test delivered: HTTP ${o.status_code} in ${Math.round(o.latency_ms)} ms.</p>`
    : html`<p class="bad" role="status">Test not delivered: ${o.error ?? `HTTP ${o.status_code}`}.</p>`

/** @param {{ onDone: () => void }} props */
const WebhookForm = ({ onDone }) => {
  const [error, setError] = useState(/** @type {string | null} */ (null))
  /** @param {SubmitEvent} e */
  const submit = async (e) => {
    e.preventDefault()
    const f = new FormData(/** @type {HTMLFormElement} */ (e.currentTarget))
    try {
      await api("POST", "/webhooks", { body: { url: String(f.get("url")), events: f.getAll("events").map(String), secret: String(f.get("secret")) } })
      onDone()
    } catch (err) {
      setError(/** @type {Error} */ (err).message)
    }
  }
  return html`<form class="panel" onSubmit=${submit} aria-label="New webhook">
    <h2>New webhook</h2>
    ${error ? html`<p class="error" role="alert">The API refused the webhook: ${error}</p>` : null}
    <label><span>URL (https)</span><input name="url" type="url" required placeholder="https://hooks.example.com/signal-engine" /></label>
    <fieldset><legend>Events</legend>
      ${eventNames.map((n) => html`<label class="check"><input type="checkbox" name="events" defaultValue=${n} defaultChecked /><span>${n}</span></label>`)}
    </fieldset>
    <label><span>Secret (at least 32 characters; it signs every delivery and is never shown again)</span>
      <input name="secret" type="password" autocomplete="new-password" minlength="32" required /></label>
    <div class="row"><button type="submit" class="primary">Create webhook</button><button type="button" onClick=${onDone}>Cancel</button></div>
  </form>`
}
