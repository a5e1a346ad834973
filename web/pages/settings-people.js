// Users, teams and projects: listed with the API's pagination, created in place.
import { html } from "htm/preact"
import { useState } from "preact/hooks"
import { api, auth, listAll } from "../api.js"
import { time } from "../format.js"
import { Badge, ConfirmButton, ErrorBox, Loaded, Pager, Table, useLoad, usePages } from "../ui.js"
import { forgetUserNames } from "../users.js"

/**
 * A create form above a paginated list: what the three share. Without `changes` (a role that may
 * only read) the list alone, without its last column (the row's change).
 * @param {{ title: string, path: string, fields: any, toBody: (f: FormData) => unknown, columns: (reload: () => void, fail: (e: any) => void) => Array<any>, empty: string, changes: boolean }} props
 */
const Managed = ({ title, path, fields, toBody, columns, empty, changes }) => {
  const pages = usePages((cursor) => api("GET", path, { query: { cursor } }), [path])
  const [error, setError] = useState(/** @type {any} */ (null))
  /** @param {SubmitEvent} e */
  const submit = async (e) => {
    e.preventDefault()
    const form = /** @type {HTMLFormElement} */ (e.currentTarget)
    setError(null)
    try {
      await api("POST", path, { body: toBody(new FormData(form)) })
      if (path === "/users") forgetUserNames()
      form.reset()
      pages.reload()
    } catch (err) {
      setError(err)
    }
  }
  const shown = columns(pages.reload, setError)
  return html`<h2>${title}</h2>
    ${
    changes ?
      html`<form class="panel inline" onSubmit=${submit} aria-label=${`New ${title.toLowerCase().replace(/s$/, "")}`}>
      ${fields}
      <button type="submit" class="primary">Add</button>
    </form>` :
      null
  }
    ${error ? html`<${ErrorBox} error=${error} />` : null}
    <${Loaded} state=${pages}>${(/** @type {any} */ page) =>
    html`
      <${Table} rows=${page.data} empty=${empty} columns=${changes ? shown : shown.slice(0, -1)} />
      <${Pager} pages=${pages} label=${title} />`}<//>`
}

export const Users = () => {
  const teams = useLoad(() => listAll("/teams"), [])
  /** @param {string} id */
  const teamName = (id) => teams.data?.find((t) => t.id === id)?.name ?? id
  return html`<${Managed} title="Users" path="/users" empty="No users." changes=${auth.may("users.create")}
  fields=${html`<label><span>Name</span><input name="name" required /></label>
    <label><span>E-mail</span><input name="email" type="email" required /></label>
    <label><span>Role</span><select name="role">${
    ["member", "team_lead", "viewer", "admin"].map((r) => html`<option value=${r}>${r}</option>`)
  }</select></label>
    <label><span>Team</span><select name="team_id"><option value="">none</option>
      ${(teams.data ?? []).map((t) => html`<option value=${t.id}>${t.name}</option>`)}</select></label>`}
  toBody=${(/** @type {FormData} */ f) => ({
    name: String(f.get("name")),
    email: String(f.get("email")),
    role: String(f.get("role")),
    ...(f.get("team_id") ? { team_ids: [String(f.get("team_id"))] } : {})
  })}
  columns=${(/** @type {() => void} */ reload, /** @type {(e: any) => void} */ fail) => [
    { label: "Name", cell: (/** @type {any} */ u) => html`<strong>${u.name}</strong><br /><small>${u.email}</small>` },
    { label: "Role", cell: (/** @type {any} */ u) => u.role },
    { label: "Teams", cell: (/** @type {any} */ u) => u.team_ids.map(teamName).join(", ") || "—" },
    { label: "Status", cell: (/** @type {any} */ u) => html`<${Badge} value=${u.status} tone=${u.status === "active" ? "ok" : ""} />` },
    { label: "Id", cell: (/** @type {any} */ u) => html`<code>${u.id}</code>` },
    {
      label: "",
      cell: (/** @type {any} */ u) =>
        u.status === "active" ?
          html`<${ConfirmButton} label="Deactivate" confirmLabel=${`Deactivate ${u.name}? Their license keys are revoked.`}
        onConfirm=${() => api("DELETE", `/users/${u.id}`).then(reload, fail)} />` :
          null
    }
  ]} />`
}

export const Teams = () =>
  html`<${Managed} title="Teams" path="/teams" empty="No teams." changes=${auth.may("teams.create")}
  fields=${html`<label><span>Name</span><input name="name" required /></label>`}
  toBody=${(/** @type {FormData} */ f) => ({ name: String(f.get("name")) })}
  columns=${(/** @type {() => void} */ reload, /** @type {(e: any) => void} */ fail) => [
    { label: "Name", cell: (/** @type {any} */ t) => html`<strong>${t.name}</strong>` },
    { label: "Members", className: "num", cell: (/** @type {any} */ t) => t.member_ids.length },
    { label: "Created", cell: (/** @type {any} */ t) => time(t.created_at) },
    { label: "Id", cell: (/** @type {any} */ t) => html`<code>${t.id}</code>` },
    {
      label: "",
      cell: (/** @type {any} */ t) =>
        html`<${ConfirmButton} label="Delete" confirmLabel=${`Delete team ${t.name}?`}
        onConfirm=${() => api("DELETE", `/teams/${t.id}`).then(reload, fail)} />`
    }
  ]} />`

export const Projects = () =>
  html`<${Managed} title="Projects" path="/projects" empty="No projects registered. Signals may still name project ids."
  changes=${auth.may("projects.create")}
  fields=${html`<label><span>Name</span><input name="name" required /></label>`}
  toBody=${(/** @type {FormData} */ f) => ({ name: String(f.get("name")) })}
  columns=${(/** @type {() => void} */ reload, /** @type {(e: any) => void} */ fail) => [
    { label: "Name", cell: (/** @type {any} */ p) => html`<strong>${p.name}</strong>` },
    { label: "Project id", cell: (/** @type {any} */ p) => html`<code>${p.id}</code>` },
    { label: "Created", cell: (/** @type {any} */ p) => time(p.created_at) },
    {
      label: "",
      cell: (/** @type {any} */ p) =>
        html`<${ConfirmButton} label="Delete" confirmLabel=${`Delete project ${p.name}?`}
        onConfirm=${() => api("DELETE", `/projects/${p.id}`).then(reload, fail)} />`
    }
  ]} />`
