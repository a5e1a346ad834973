// Settings: keys, people, projects and the org's own settings, one tab each (?tab=).
import { html } from "htm/preact"
import { useState } from "preact/hooks"
import { api, auth } from "../api.js"
import { hrefOf } from "../route.js"
import { ApiKeys, LicenseKeys } from "./settings-keys.js"
import { Projects, Teams, Users } from "./settings-people.js"

/** Each tab with the operation it reads (the org's settings: the one that changes them), shown to whom may call it. */
const tabs = [
  ["keys", "API keys", "apiKeys.list"],
  ["license", "License keys", "licenseKeys.list"],
  ["users", "Users", "users.list"],
  ["teams", "Teams", "teams.list"],
  ["projects", "Projects", "projects.list"],
  ["org", "Org", "org.update"]
]

/** @param {{ query: Record<string, string>, org: any, setOrg: (org: any) => void }} props */
export const Settings = ({ query, org, setOrg }) => {
  const offered = tabs.filter(([, , reads]) => auth.may(reads))
  const tab = offered.find(([id]) => id === query.tab)?.[0] ?? offered[0]?.[0]
  return html`<h1>Settings</h1>
    <nav class="tabs" aria-label="Settings">
      ${offered.map(([id, label]) => html`<a href=${hrefOf("/settings", { tab: id })} aria-current=${tab === id ? "page" : undefined}>${label}</a>`)}
    </nav>
    ${
    tab === "keys" ?
      html`<${ApiKeys} org=${org} />`
      : tab === "license" ?
      html`<${LicenseKeys} />`
      : tab === "users" ?
      html`<${Users} />`
      : tab === "teams" ?
      html`<${Teams} />`
      : tab === "projects" ?
      html`<${Projects} />`
      : html`<${OrgSettings} org=${org} setOrg=${setOrg} />`
  }`
}

/** @param {{ org: any, setOrg: (org: any) => void }} props */
const OrgSettings = ({ org, setOrg }) => {
  const [message, setMessage] = useState(/** @type {{ ok: boolean, text: string } | null} */ (null))
  /** @param {SubmitEvent} e */
  const submit = async (e) => {
    e.preventDefault()
    const f = new FormData(/** @type {HTMLFormElement} */ (e.currentTarget))
    const streak = String(f.get("drift_prompts")).trim()
    try {
      const updated = await api("PATCH", "/org", {
        body: {
          time_zone: String(f.get("time_zone")).trim(),
          session_timeout: Math.round(Number(f.get("session_timeout")) * 60),
          // Empty: the deployment's own number.
          drift_prompts: streak === "" ? null : Number(streak)
        }
      })
      setOrg(updated)
      setMessage({ ok: true, text: "Saved. Signals accepted from now on use these settings." })
    } catch (err) {
      setMessage({ ok: false, text: /** @type {Error} */ (err).message })
    }
  }
  return html`<form class="panel" onSubmit=${submit} aria-label="Org settings">
    <h2>${org.name}</h2>
    <p class="muted">Plan ${org.plan} · id <code>${org.id}</code>. These settings apply to both environments.</p>
    ${message ? html`<p class=${message.ok ? "ok" : "error"} role=${message.ok ? "status" : "alert"}>${message.text}</p>` : null}
    <label><span>Session timeout (minutes of inactivity that end a session)</span>
      <input name="session_timeout" type="number" min="1" step="any" defaultValue=${org.session_timeout / 60} required /></label>
    <label><span>Time zone (IANA name; days and months are counted in it)</span>
      <input name="time_zone" defaultValue=${org.time_zone} required list="time-zones" /></label>
    <datalist id="time-zones">${timeZones().map((z) => html`<option value=${z} />`)}</datalist>
    <label><span>Goal drift (off-goal prompts in a row, in one session, that make a drift; 0: none; empty: the deployment's)</span>
      <input name="drift_prompts" type="number" min="0" max="20" step="1" defaultValue=${org.drift_prompts ?? ""} placeholder="default" /></label>
    <button type="submit" class="primary">Save settings</button>
  </form>`
}

const timeZones = () => {
  try {
    return /** @type {any} */ (Intl).supportedValuesOf("timeZone")
  } catch {
    return ["UTC"]
  }
}
