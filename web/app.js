// The dashboard's shell: sign-in with the org's identity provider or a management API key, the
// navigation, and the page the URL names. Every page reads the management API only (api.js).
import { html } from "htm/preact"
import { render } from "preact"
import { useEffect, useState } from "preact/hooks"
import { api, ApiError, auth, environmentOf } from "./api.js"
import { hrefOf, useRoute } from "./route.js"
import { Overview } from "./pages/overview.js"
import { Sessions } from "./pages/sessions.js"
import { SessionTimeline } from "./pages/session.js"
import { Events } from "./pages/events.js"
import { Alerts } from "./pages/alerts.js"
import { Rules } from "./pages/rules.js"
import { Webhooks } from "./pages/webhooks.js"
import { Channels } from "./pages/channels.js"
import { Settings } from "./pages/settings.js"
import { Goals } from "./pages/goals.js"
import { AuditLog } from "./pages/audit-log.js"
import { Productivity } from "./pages/productivity.js"
import { Coverage } from "./pages/coverage.js"

/** Each page with the operation it reads: a person whose role may not call it is not offered the page. */
const pages = [
  { path: "/overview", title: "Overview", view: Overview, reads: "usage.report" },
  { path: "/sessions", title: "Sessions", view: Sessions, reads: "sessions.list" },
  { path: "/events", title: "Events", view: Events, reads: "events.list" },
  { path: "/alerts", title: "Alerts", view: Alerts, reads: "alerts.list" },
  { path: "/rules", title: "Rules", view: Rules, reads: "rules.list" },
  { path: "/webhooks", title: "Webhooks", view: Webhooks, reads: "webhooks.list" },
  { path: "/channels", title: "Channels", view: Channels, reads: "channels.list" },
  { path: "/goals", title: "Goals", view: Goals, reads: "goals.list" },
  { path: "/audit", title: "Audit log", view: AuditLog, reads: "auditLog.list" },
  { path: "/productivity", title: "Productivity", view: Productivity, reads: "telemetryViews.productivity" },
  { path: "/coverage", title: "Coverage", view: Coverage, reads: "telemetryViews.coverage" },
  { path: "/settings", title: "Settings", view: Settings, reads: "users.list" }
]

/** @typedef {{ id: string, name: string, plan: string, environment: string, time_zone: string, session_timeout: number }} Org */

/**
 * What the sign-in page may know of an org before anyone signs in: whether it uses SSO and still
 * takes a pasted key (an org without SSO, or none of that name, takes keys).
 * @param {string} org its name or id
 * @returns {Promise<{ sso: boolean, api_key_sign_in: boolean }>}
 */
const ssoOf = (org) => fetch(`/dashboard/sso/org?org=${encodeURIComponent(org)}`).then((r) => (r.ok ? r.json() : { sso: false, api_key_sign_in: true }))

const orgItem = "signal-engine.org"

/** @param {{ onSignedIn: (org: Org) => void }} props */
const SignIn = ({ onSignedIn }) => {
  const [message] = useState(() => auth.takeMessage())
  const [error, setError] = useState(/** @type {string | null} */ (null))
  const [busy, setBusy] = useState(false)
  const [orgName, setOrgName] = useState(() => localStorage.getItem(orgItem) ?? "")
  const [keyPaste, setKeyPaste] = useState(true)
  // The org typed so far decides whether the key paste is offered (debounced while typing).
  useEffect(() => {
    const name = orgName.trim()
    if (!name) return setKeyPaste(true)
    const timer = setTimeout(() => ssoOf(name).then((s) => setKeyPaste(s.api_key_sign_in), () => setKeyPaste(true)), 250)
    return () => clearTimeout(timer)
  }, [orgName])
  /** @param {SubmitEvent} e */
  const sso = (e) => {
    e.preventDefault()
    const name = orgName.trim()
    if (!name) return setError("Enter your organization's name to sign in with single sign-on.")
    localStorage.setItem(orgItem, name)
    location.assign(`/dashboard/sso/login?org=${encodeURIComponent(name)}`)
  }
  /** @param {SubmitEvent} e */
  const submit = async (e) => {
    e.preventDefault()
    const form = /** @type {HTMLFormElement} */ (e.currentTarget)
    const key = /** @type {HTMLInputElement} */ (form.elements.namedItem("key")).value.trim()
    if (!key) return setError("Enter a management API key.")
    setBusy(true)
    setError(null)
    try {
      const org = await api("GET", "/org", { key })
      if (!(await ssoOf(org.id)).api_key_sign_in) {
        setKeyPaste(false)
        return setError(`${org.name} signs in with single sign-on: pasting an API key into the dashboard is turned off.`)
      }
      auth.signIn(key)
      onSignedIn(org)
    } catch (err) {
      setError(
        err instanceof ApiError && err.status === 401
          ? "That key is not valid: it may be mistyped, revoked or not an API key (license keys are for adapters)."
          : err instanceof ApiError && err.status === 403
          ? "That key works but lacks the admin:read scope the dashboard needs."
          : /** @type {Error} */ (err).message
      )
    } finally {
      setBusy(false)
    }
  }
  return html`<main class="sign-in">
    <div class="sign-in-forms">
      <h1 id="sign-in-title">signal-engine</h1>
      ${message ? html`<p class="notice" role="alert">${message}</p>` : null}
      ${error ? html`<p class="error" role="alert">${error}</p>` : null}
      <form onSubmit=${sso} aria-label="Sign in with single sign-on">
        <label><span>Organization</span><input name="org" autocomplete="organization" value=${orgName} onInput=${(
    /** @type {InputEvent} */ e
  ) => setOrgName(/** @type {HTMLInputElement} */ (e.currentTarget).value)} /></label>
        <button type="submit" class="primary">Sign in with SSO</button>
      </form>
      ${
    keyPaste
      ? html`<form onSubmit=${submit} aria-label="Sign in with an API key">
        <p>Sign in with a management API key (<code>sek_live_…</code> for live data, <code>sek_test_…</code> for test data). It is kept in this browser tab only.</p>
        <label><span>API key</span><input name="key" type="password" autocomplete="off" spellcheck="false" autofocus required /></label>
        <button type="submit" disabled=${busy}>${busy ? "Signing in…" : "Sign in"}</button>
      </form>`
      : html`<p class="notice">This organization signs in with single sign-on only.</p>`
  }
    </div>
  </main>`
}

/** @param {{ org: Org, onSignOut: () => void, setOrg: (org: Org) => void }} props */
const Shell = ({ org, onSignOut, setOrg }) => {
  const route = useRoute()
  const env = org.environment ?? environmentOf(auth.key() ?? "")
  const sessionId = /^\/sessions\/(.+)$/.exec(route.path)?.[1]
  const page = pages.find((p) => route.path === p.path) ?? (sessionId ? pages[1] : pages[0])
  useEffect(() => {
    document.title = `${page?.title ?? "Overview"} · signal-engine (${env})`
    document.getElementById("main")?.focus({ preventScroll: true })
    // On phones the navigation is a scrolling row: keep the current page's link in view.
    document.querySelector(".side a[aria-current=page]")?.scrollIntoView({ block: "nearest", inline: "nearest" })
  }, [route.path])
  const View = page?.view ?? Overview
  return html`<div class=${`shell env-${env}`}>
    <a class="skip" href="#main" onClick=${(/** @type {Event} */ e) => {
    e.preventDefault()
    document.getElementById("main")?.focus()
  }}>Skip to content</a>
    <header class="top">
      <span class="brand">signal-engine</span>
      <span class=${`env env-badge-${env}`} title="The environment of your key: what you see and change">${env === "live" ? "Live data" : "Test data"}</span>
      <span class="org">${org.name} · ${org.plan}${auth.person() ? ` · ${auth.person()?.user.name || auth.person()?.user.email}` : ""}</span>
      <button type="button" class="link" onClick=${onSignOut}>Sign out</button>
    </header>
    <nav class="side" aria-label="Pages">
      ${pages.filter((p) => auth.may(p.reads)).map((p) => html`<a href=${hrefOf(p.path)} aria-current=${p === page ? "page" : undefined}>${p.title}</a>`)}
    </nav>
    <main id="main" tabindex="-1">
      ${
    sessionId
      ? html`<${SessionTimeline} id=${decodeURIComponent(sessionId)} org=${org} />`
      : auth.may(page?.reads ?? "usage.report")
      ? html`<${View} query=${route.query} org=${org} setOrg=${setOrg} />`
      : html`<h1>${page?.title}</h1><p class="notice">Your role (${auth.person()?.user.role}) does not give access to this page.</p>`
  }
    </main>
  </div>`
}

const App = () => {
  const [org, setOrg] = useState(/** @type {Org | null | undefined} */ (undefined))
  // A reload keeps the tab's key, or the browser's session: check it again (it may have ended meanwhile).
  useEffect(() => {
    const signedIn = auth.key() ? Promise.resolve(true) : auth.resume().then((p) => p !== null)
    signedIn.then((yes) => (yes ? api("GET", "/org") : null)).then(setOrg, (err) => {
      if (err instanceof ApiError && err.status === 403) auth.signOut(`Your role does not give access to the dashboard (${err.message}).`, false)
      setOrg(null)
    })
    return auth.onSignedOut(() => setOrg(null))
  }, [])
  if (org === undefined) return html`<p class="loading">Loading…</p>`
  if (org === null) return html`<${SignIn} onSignedIn=${setOrg} />`
  return html`<${Shell} org=${org} setOrg=${setOrg} onSignOut=${() => auth.signOut("You signed out.")} />`
}

render(html`<${App} />`, /** @type {HTMLElement} */ (document.getElementById("app")))
