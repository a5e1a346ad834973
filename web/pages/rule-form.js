// Create or edit a rule: the fields of its type's condition, sent as the API takes them; what
// the API refuses is shown with its own message.
import { html } from "htm/preact"
import { useState } from "preact/hooks"
import { api, listAll } from "../api.js"
import { Loaded, options, useLoad } from "../ui.js"

const types = ["budget", "model_filter", "user_limit", "org_policy"]
const typeNames = { budget: "Budget", model_filter: "Model filter", user_limit: "Per-user limit", org_policy: "Org policy" }
const scopes = ["org", "team", "user", "project"]
const actions = ["block", "warn", "log", "notify", "redact"]

/** @param {string} text */
const list = (text) => text.split(/[\n,]/).map((s) => s.trim()).filter(Boolean)

/**
 * @param {string} type
 * @param {FormData} f
 * @returns {Record<string, unknown>}
 */
const conditionOf = (type, f) => {
  const str = (/** @type {string} */ name) => String(f.get(name) ?? "")
  const number = (/** @type {string} */ name) => (str(name) === "" ? str(name) : Number(str(name)))
  switch (type) {
    case "budget":
      return { window: str("window"), metric: str("metric"), threshold: number("threshold") }
    case "user_limit":
      return { window: str("window"), metric: str("metric"), per_user: number("per_user") }
    case "model_filter":
      return { model: { [str("mode")]: list(str("models")) } }
    default: {
      /** @type {Record<string, unknown>} */
      const c = {}
      if (f.get("require_project_id")) c.require_project_id = true
      if (f.get("block_unknown_models")) c.block_unknown_models = true
      for (const name of ["blocked_tools", "blocked_commands", "blocked_mcp_servers", "secret_kinds"]) {
        const values = list(str(name))
        if (values.length) c[name] = values
      }
      // One glob a line: a glob may hold commas ({.env,.npmrc}).
      const globs = str("protected_paths").split("\n").map((s) => s.trim()).filter(Boolean)
      if (globs.length) c.protected_paths = globs
      return c
    }
  }
}

/** @param {{ org: any, rule?: any, onSaved: (rule: any) => void, onCancel: () => void }} props */
export const RuleForm = ({ org, rule, onSaved, onCancel }) => {
  const [type, setType] = useState(rule?.type ?? "budget")
  const [scope, setScope] = useState(rule?.scope ?? "org")
  const [error, setError] = useState(/** @type {string | null} */ (null))
  const [busy, setBusy] = useState(false)
  const pickers = useLoad(async () => {
    const [users, teams, projects] = await Promise.all([listAll("/users"), listAll("/teams"), listAll("/projects")])
    return { users, teams, projects }
  }, [])
  const c = rule?.type === type ? rule.condition : {}
  /** @param {SubmitEvent} e */
  const submit = async (e) => {
    e.preventDefault()
    const f = new FormData(/** @type {HTMLFormElement} */ (e.currentTarget))
    const message = String(f.get("message") ?? "").trim()
    const body = {
      name: String(f.get("name") ?? ""),
      type,
      scope,
      scope_id: scope === "org" ? org.id : String(f.get("scope_id") ?? ""),
      priority: Number(f.get("priority")),
      condition: conditionOf(type, f),
      action: String(f.get("action")),
      action_config: message ? { message } : {},
      enabled: f.get("enabled") === "on"
    }
    setBusy(true)
    setError(null)
    try {
      onSaved(rule ? await api("PUT", `/rules/${rule.id}`, { body }) : await api("POST", "/rules", { body }))
    } catch (err) {
      setError(/** @type {Error} */ (err).message)
    } finally {
      setBusy(false)
    }
  }
  return html`<form class="panel rule-form" onSubmit=${submit} aria-label=${rule ? `Edit rule ${rule.name}` : "New rule"}>
    <h2>${rule ? `Edit “${rule.name}”` : "New rule"}</h2>
    ${error ? html`<p class="error" role="alert">The API refused the rule: ${error}</p>` : null}
    <div class="grid">
      <label><span>Name</span><input name="name" required defaultValue=${rule?.name ?? ""} /></label>
      <label><span>Type</span><select name="type" value=${type} onChange=${(/** @type {any} */ e) => setType(e.currentTarget.value)}>
        ${types.map((t) => html`<option value=${t}>${typeNames[/** @type {keyof typeof typeNames} */ (t)]}</option>`)}
      </select></label>
      <label><span>Scope</span><select name="scope" value=${scope} onChange=${(/** @type {any} */ e) => setScope(e.currentTarget.value)}>
        ${scopes.map((s) => html`<option value=${s}>${s}</option>`)}
      </select></label>
      ${
    scope === "org"
      ? html`<label><span>Applies to</span><input disabled value=${`the whole org (${org.name})`} /></label>`
      : html`<${Loaded} state=${pickers}>${(/** @type {any} */ p) =>
        html`<${ScopePicker} scope=${scope} value=${rule?.scope === scope ? rule.scope_id : ""} pickers=${p} />`}<//>`
  }
      <label><span>Priority (lower runs first)</span><input name="priority" type="number" step="1" defaultValue=${rule?.priority ?? 100} /></label>
      <label><span>Action</span><select name="action">${options(actions, rule?.action ?? "block")}</select></label>
      <label class="wide"><span>Message (required to block: the user sees it)</span><input name="message" defaultValue=${
    rule?.action_config?.message ?? ""
  } /></label>
    </div>
    <fieldset class="grid">
      <legend>Condition: ${typeNames[/** @type {keyof typeof typeNames} */ (type)]}</legend>
      ${
    type === "budget" || type === "user_limit" ?
      html`
        <label><span>Window</span><select name="window">${options(["daily", "monthly"], c.window ?? "daily")}</select></label>
        <label><span>Metric</span><select name="metric">
          ${options(type === "budget" ? ["cost_usd", "tokens_in", "tokens_out", "tokens_total"] : ["cost_usd", "tokens_total"], c.metric ?? "cost_usd")}
        </select></label>
        <label><span>${type === "budget" ? "Threshold" : "Limit per user"} (USD or tokens)</span>
          <input name=${type === "budget" ? "threshold" : "per_user"} type="number" step="any" defaultValue=${c.threshold ?? c.per_user ?? ""} /></label>` :
      null
  }
      ${
    type === "model_filter" ?
      html`
        <label><span>Mode</span><select name="mode">
          ${options([["in", "Block these models"], ["not_in", "Allow only these models"]], c.model?.not_in ? "not_in" : "in")}</select></label>
        <label class="wide"><span>Models (comma or line separated)</span><textarea name="models" rows="2" defaultValue=${
        (c.model?.in ?? c.model?.not_in ?? []).join(", ")
      } /></label>` :
      null
  }
      ${
    type === "org_policy" ?
      html`
        <label class="check"><input type="checkbox" name="require_project_id" defaultChecked=${
        c.require_project_id === true
      } /><span>Require a project id</span></label>
        <label class="check"><input type="checkbox" name="block_unknown_models" defaultChecked=${
        c.block_unknown_models === true
      } /><span>Block unknown models</span></label>
        <label class="wide"><span>Blocked tools (e.g. mcp__*)</span><textarea name="blocked_tools" rows="2" defaultValue=${
        (c.blocked_tools ?? []).join(", ")
      } /></label>
        <label class="wide"><span>Blocked shell commands (e.g. rm -rf)</span><textarea name="blocked_commands" rows="2" defaultValue=${
        (c.blocked_commands ?? []).join(", ")
      } /></label>
        <label class="wide"><span>Blocked MCP servers</span><textarea name="blocked_mcp_servers" rows="2" defaultValue=${
        (c.blocked_mcp_servers ?? []).join(", ")
      } /></label>
        <label class="wide"><span>Secrets found (kinds, e.g. aws_access_token, github_pat; * any)</span><textarea name="secret_kinds" rows="2" defaultValue=${
        (c.secret_kinds ?? []).join(", ")
      } /></label>
        <label class="wide"><span>Protected files (globs, one a line, e.g. **/.env)</span><textarea name="protected_paths" rows="3" defaultValue=${
        (c.protected_paths ?? []).join("\n")
      } /></label>` :
      null
  }
    </fieldset>
    <label class="check"><input type="checkbox" name="enabled" defaultChecked=${rule?.enabled ?? true} /><span>Enabled</span></label>
    <div class="row">
      <button type="submit" class="primary" disabled=${busy}>${rule ? "Save rule" : "Create rule"}</button>
      <button type="button" onClick=${onCancel}>Cancel</button>
    </div>
  </form>`
}

/** @param {{ scope: string, value: string, pickers: { users: Array<any>, teams: Array<any>, projects: Array<any> } }} props */
const ScopePicker = ({ scope, value, pickers }) => {
  if (scope === "project") {
    return html`<label><span>Project id</span><input name="scope_id" list="project-ids" defaultValue=${value} required />
      <datalist id="project-ids">${pickers.projects.map((p) => html`<option value=${p.id}>${p.name}</option>`)}</datalist></label>`
  }
  /** @type {Array<[string, string]>} */
  const choices = scope === "user" ? pickers.users.map((u) => [u.id, `${u.name} (${u.email})`]) : pickers.teams.map((t) => [t.id, t.name])
  return html`<label><span>${scope === "user" ? "User" : "Team"}</span><select name="scope_id" required>
    ${options([["", "Choose…"], ...choices], value)}
  </select></label>`
}
