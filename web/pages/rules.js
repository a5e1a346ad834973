// Rules in the order the engine applies them (priority, lower first; ties: older first), with
// the API's filters; create, edit, enable or disable, delete.
import { html } from "htm/preact"
import { useState } from "preact/hooks"
import { api, auth } from "../api.js"
import { shortId } from "../format.js"
import { navigate } from "../route.js"
import { Badge, ConfirmButton, ErrorBox, Filters, Loaded, Pager, Table, useAction, usePages } from "../ui.js"
import { RuleForm } from "./rule-form.js"

const fields = [
  {
    name: "type",
    label: "Type",
    options: /** @type {Array<[string, string]>} */ ([["", "Any"], ["budget", "Budget"], ["model_filter", "Model filter"], ["user_limit", "Per-user limit"], [
      "org_policy",
      "Org policy"
    ]])
  },
  {
    name: "scope",
    label: "Scope",
    options: /** @type {Array<[string, string]>} */ ([["", "Any"], ["org", "org"], ["team", "team"], ["user", "user"], ["project", "project"]])
  },
  { name: "scope_id", label: "Scope id" },
  { name: "enabled", label: "Enabled", options: /** @type {Array<[string, string]>} */ ([["", "Any"], ["true", "Enabled"], ["false", "Disabled"]]) }
]

/** @param {any} a @param {any} b */
const byPriority = (a, b) => a.priority - b.priority || a.created_at.localeCompare(b.created_at)

/** @param {any} c */
const summary = (c) => Object.entries(c).map(([k, v]) => `${k}: ${typeof v === "object" ? JSON.stringify(v) : v}`).join(" · ")

/** @param {{ query: Record<string, string>, org: any }} props */
export const Rules = ({ query, org }) => {
  const pages = usePages((cursor) => api("GET", "/rules", { query: { ...query, limit: 100, cursor } }), [JSON.stringify(query)])
  const [editing, setEditing] = useState(/** @type {any} */ (null))
  const { error, act } = useAction(pages.reload)
  return html`<div class="section-head"><h1>Rules</h1>
      ${editing || !auth.may("rules.create") ? null : html`<button type="button" class="primary" onClick=${() => setEditing({})}>New rule</button>`}</div>
    ${
    editing ?
      html`<${RuleForm} org=${org} rule=${editing.id ? editing : undefined}
      onSaved=${() => {
        setEditing(null)
        pages.reload()
      }} onCancel=${() => setEditing(null)} />` :
      null
  }
    ${error ? html`<${ErrorBox} error=${error} />` : null}
    <${Filters} fields=${fields} values=${query} onApply=${(/** @type {Record<string, string>} */ q) => navigate("/rules", q)} />
    <p class="lede">Listed in evaluation order: lower priority first, then older first.</p>
    <${Loaded} state=${pages}>${(/** @type {any} */ page) =>
    html`
      <${Table}
        rows=${[...page.data].sort(byPriority)}
        empty=${Object.keys(query).length ? "No rule matches these filters." : "No rules yet. Create one to block models, cap spend or set org policies."}
        rowClass=${(/** @type {any} */ r) => (r.enabled ? "" : "disabled")}
        columns=${[
      { label: "Priority", className: "num", cell: (/** @type {any} */ r) => r.priority },
      { label: "Name", cell: (/** @type {any} */ r) => html`<strong>${r.name}</strong><br /><small>${r.type}</small>` },
      { label: "Scope", cell: (/** @type {any} */ r) => html`${r.scope}<br /><small title=${r.scope_id}>${shortId(r.scope_id)}</small>` },
      { label: "Condition", cell: (/** @type {any} */ r) => html`<small>${summary(r.condition)}</small>` },
      {
        label: "Action",
        cell: (/** @type {any} */ r) =>
          html`<${Badge} value=${r.action} />${r.action_config?.message ? html`<br /><small>${r.action_config.message}</small>` : null}`
      },
      {
        label: "Enabled",
        cell: (/** @type {any} */ r) =>
          auth.may("rules.update")
            ? html`<button type="button" class="toggle" aria-pressed=${r.enabled}
              aria-label=${`${r.enabled ? "Disable" : "Enable"} ${r.name}`}
              onClick=${() => act(() => api("PUT", `/rules/${r.id}`, { body: { enabled: !r.enabled } }))}>${r.enabled ? "Enabled" : "Disabled"}</button>`
            : r.enabled
            ? "Enabled"
            : "Disabled"
      },
      {
        label: "",
        cell: (/** @type {any} */ r) =>
          auth.may("rules.update") ?
            html`<div class="row">
              <button type="button" onClick=${() => setEditing(r)} aria-label=${`Edit ${r.name}`}>Edit</button>
              <${ConfirmButton} label="Delete" confirmLabel=${`Delete “${r.name}”?`} onConfirm=${() => act(() => api("DELETE", `/rules/${r.id}`))} />
            </div>` :
            null
      }
    ]}
      />
      <${Pager} pages=${pages} label="Rules" />`}<//>`
}
