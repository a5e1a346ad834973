// API keys and license keys: created keys are shown once (with a copy button), then only their hint.
import { html } from "htm/preact"
import { useState } from "preact/hooks"
import { api, listAll } from "../api.js"
import { shortId, time } from "../format.js"
import { Badge, ConfirmButton, ErrorBox, Loaded, Pager, ShownOnce, Table, useLoad, usePages } from "../ui.js"

const scopes = ["rules:read", "rules:write", "sessions:read", "sessions:write", "events:read", "events:write", "webhooks:read", "webhooks:write", "admin:read",
  "admin:write"]

/** @param {any} k */
const state = (k) => html`<${Badge} value=${k.revoked_at ? "revoked" : "active"} tone=${k.revoked_at ? "" : "ok"} />`

/** @param {{ org: any }} props */
export const ApiKeys = ({ org }) => {
  const pages = usePages((cursor) => api("GET", "/api-keys", { query: { cursor } }), [])
  const [created, setCreated] = useState(/** @type {any} */ (null))
  const [error, setError] = useState(/** @type {any} */ (null))
  /** @param {SubmitEvent} e */
  const submit = async (e) => {
    e.preventDefault()
    const form = /** @type {HTMLFormElement} */ (e.currentTarget)
    const f = new FormData(form)
    setError(null)
    try {
      setCreated(await api("POST", "/api-keys", { body: { name: String(f.get("name")), scopes: f.getAll("scopes").map(String) } }))
      form.reset()
      pages.reload()
    } catch (err) {
      setError(err)
    }
  }
  return html`<h2>API keys (${org.environment})</h2>
    <p class="muted">Keys for the management API in the ${org.environment} environment: a key is created in the environment of the key you signed in with.</p>
    ${created ? html`<${ShownOnce} label=${`New API key “${created.name}”`} value=${created.key} onDone=${() => setCreated(null)} />` : null}
    <form class="panel" onSubmit=${submit} aria-label="New API key">
      <label><span>Name</span><input name="name" required placeholder="CI reporting" /></label>
      <fieldset><legend>Scopes</legend>
        ${
    scopes.map((s) =>
      html`<label class="check"><input type="checkbox" name="scopes" defaultValue=${s} defaultChecked=${s.endsWith(":read")} /><span>${s}</span></label>`
    )
  }
      </fieldset>
      <button type="submit" class="primary">Create API key</button>
    </form>
    ${error ? html`<${ErrorBox} error=${error} />` : null}
    <${Loaded} state=${pages}>${(/** @type {any} */ page) =>
    html`
      <${Table} rows=${page.data} empty="No API keys."
        columns=${[
      { label: "Name", cell: (/** @type {any} */ k) => html`<strong>${k.name}</strong><br /><code>${k.key_hint}</code>` },
      { label: "Scopes", cell: (/** @type {any} */ k) => html`<small>${k.scopes.join(", ")}</small>` },
      { label: "Created", cell: (/** @type {any} */ k) => time(k.created_at) },
      { label: "State", cell: state },
      {
        label: "",
        cell: (/** @type {any} */ k) =>
          k.revoked_at ? null : html`<${ConfirmButton} label="Revoke" confirmLabel=${`Revoke “${k.name}”? Clients using it stop at once.`}
              onConfirm=${() => api("DELETE", `/api-keys/${k.id}`).then(pages.reload, setError)} />`
      }
    ]} />
      <${Pager} pages=${pages} label="API keys" />`}<//>`
}

export const LicenseKeys = () => {
  const pages = usePages((cursor) => api("GET", "/license-keys", { query: { cursor } }), [])
  const users = useLoad(() => listAll("/users"), [])
  const [created, setCreated] = useState(/** @type {any} */ (null))
  const [error, setError] = useState(/** @type {any} */ (null))
  /** @param {SubmitEvent} e */
  const submit = async (e) => {
    e.preventDefault()
    const f = new FormData(/** @type {HTMLFormElement} */ (e.currentTarget))
    setError(null)
    try {
      setCreated(await api("POST", "/license-keys", { body: { user_id: String(f.get("user_id")) } }))
      pages.reload()
    } catch (err) {
      setError(err)
    }
  }
  /** @param {string} id */
  const who = (id) => users.data?.find((u) => u.id === id)?.name ?? shortId(id)
  return html`<h2>License keys</h2>
    <p class="muted">A license key connects one user's coding tools (the adapters) to the engine.</p>
    ${created ? html`<${ShownOnce} label=${`New license key for ${who(created.user_id)}`} value=${created.key} onDone=${() => setCreated(null)} />` : null}
    <${Loaded} state=${users}>${(/** @type {Array<any>} */ list) =>
    html`<form class="panel inline" onSubmit=${submit} aria-label="New license key">
      <label><span>User</span><select name="user_id" required>
        ${list.filter((u) => u.status === "active").map((u) => html`<option value=${u.id}>${u.name} (${u.email})</option>`)}
      </select></label>
      <button type="submit" class="primary">Create license key</button>
    </form>`}<//>
    ${error ? html`<${ErrorBox} error=${error} />` : null}
    <${Loaded} state=${pages}>${(/** @type {any} */ page) =>
    html`
      <${Table} rows=${page.data} empty="No license keys."
        columns=${[
      { label: "Key", cell: (/** @type {any} */ k) => html`<code>${k.key_hint}</code>` },
      { label: "User", cell: (/** @type {any} */ k) => html`<span title=${k.user_id}>${who(k.user_id)}</span>` },
      { label: "Created", cell: (/** @type {any} */ k) => time(k.created_at) },
      { label: "State", cell: state },
      {
        label: "",
        cell: (/** @type {any} */ k) =>
          k.revoked_at ? null : html`<${ConfirmButton} label="Revoke" confirmLabel="Revoke this license key? The user's tools stop at once."
              onConfirm=${() => api("DELETE", `/license-keys/${k.id}`).then(pages.reload, setError)} />`
      }
    ]} />
      <${Pager} pages=${pages} label="License keys" />`}<//>`
}
