// One session's timeline: its events oldest first (GET /sessions/:id/events?order=asc), each with
// the verdict a rule gave it, tokens and cost; errors, goal drift and token spikes stand out.
import { html } from "htm/preact"
import { api } from "../api.js"
import { count, duration, money, time, tokens } from "../format.js"
import { hrefOf } from "../route.js"
import { UserName } from "../users.js"
import { Badge, Loaded, Pager, useLoad, usePages } from "../ui.js"

// As the engine's defaults (SPIKE_FACTOR, SPIKE_MIN_SAMPLES): a signal with more than 3× the
// average tokens of the session's earlier ones, once there are 5, is marked.
const spikeFactor = 3
const spikeMinSamples = 5

/** @param {{ id: string }} props */
export const SessionTimeline = ({ id }) => {
  const session = useLoad(() => api("GET", `/sessions/${encodeURIComponent(id)}`), [id])
  const pages = usePages((cursor) => api("GET", `/sessions/${encodeURIComponent(id)}/events`, { query: { order: "asc", limit: 100, cursor } }), [id])
  return html`<p><a href=${hrefOf("/sessions")}>← Sessions</a></p>
    <${Loaded} state=${session}>${(/** @type {any} */ s) =>
    html`
      <h1>Session <code>${s.id}</code></h1>
      <dl class="facts">
        <div><dt>User</dt><dd><a href=${hrefOf("/sessions", { user_id: s.user_id })}><${UserName} id=${s.user_id} /></a></dd></div>
        <div><dt>Adapter</dt><dd>${s.adapter}</dd></div>
        <div><dt>Project</dt><dd>${s.project_id ?? "—"}</dd></div>
        <div><dt>Started</dt><dd>${time(s.started_at)}</dd></div>
        <div><dt>Ended</dt><dd>${s.ended_at ? `${time(s.ended_at)} (${s.end_reason})` : "open"}</dd></div>
        <div><dt>Duration</dt><dd>${duration(s.duration_s)}</dd></div>
        <div><dt>Models</dt><dd>${s.models.join(", ") || "—"}</dd></div>
        <div><dt>Tokens</dt><dd>${tokens(s.tokens_in)} in · ${tokens(s.tokens_out)} out</dd></div>
        <div><dt>Cost</dt><dd>${money(s.cost_usd)}</dd></div>
        <div><dt>Signals</dt><dd>${count(s.signal_count)}${
      s.error_count ? html` · <strong class="bad">${s.error_count} error${s.error_count === 1 ? "" : "s"}</strong>` : ""
    }</dd></div>
      </dl>`}<//>
    <h2>Timeline</h2>
    <${Loaded} state=${pages}>${(/** @type {any} */ page) =>
    page.data.length === 0
      ? html`<p class="empty">No signals in this session.</p>`
      : html`<ol class="timeline">${
        marked(page.data).map(({ e, spike }) =>
          html`<${Signal} e=${e} spike=${spike} drift=${
            e.type === "goal-drift" || e.type === "refocus-ack" ? metadataOf(session.data, e.signal_id) : undefined
          } />`
        )
      }</ol>
        <${Pager} pages=${pages} label="Timeline" />`}<//>`
}

/** @param {Array<any>} events @returns {Array<{ e: any, spike: number | null }>} */
const marked = (events) => {
  let total = 0
  let samples = 0
  return events.map((e) => {
    const n = e.tokens_in + e.tokens_out
    const average = samples > 0 ? total / samples : 0
    const spike = n > 0 && samples >= spikeMinSamples && n > spikeFactor * average ? n / average : null
    if (n > 0) {
      total += n
      samples += 1
    }
    return { e, spike }
  })
}

/** A signal's metadata from the session's signals (events carry none): a goal drift's goal and evidence. */
const metadataOf = (/** @type {any} */ session, /** @type {string} */ signalId) => session?.signals?.find((/** @type {any} */ s) => s.id === signalId)?.metadata

/** Which goal a drift left, since when, and the off-goal prompts that showed it. @param {{ m: any }} props */
const Drift = ({ m }) =>
  html`<div class="message">
    Drifted from “${m.goal_description ?? m.goal_id}” since ${new Date(m.since).toLocaleTimeString()}: ${m.off_goal_prompts} off-goal prompts
    ${Array.isArray(m.evidence) ? html`<ul class="evidence">${m.evidence.map((/** @type {any} */ p) => html`<li>${p.prompt}</li>`)}</ul>` : null}
  </div>`

/** How the user answered a goal drift (a refocus-ack's metadata): back to the goal, or the drift was wrong. */
const answerOf = (/** @type {any} */ m) =>
  m?.on_goal === true ? "Drift answered: it was the goal's work (its words count as the goal's from now on)" : "Drift answered: back to the goal"

/** @param {{ e: any, spike: number | null, drift?: any }} props */
const Signal = ({ e, spike, drift: details }) => {
  const v = e.verdict
  // null: no rule decided (or the signal came without an idempotency key, so none was kept).
  const verdict = v ? v.action ?? (v.ok ? "allowed" : "block") : null
  const drift = e.type === "goal-drift"
  const classes = ["signal", verdict ? `verdict-${verdict}` : "", e.error_code ? "error-signal" : "", drift ? "drift" : "", spike ? "spike" : ""].join(" ")
  return html`<li class=${classes}>
    <time datetime=${e.ts}>${new Date(e.ts).toLocaleTimeString()}</time>
    <div class="what">
      <strong>${e.type}</strong>${e.model ? html` · ${e.model}` : ""}
      ${verdict ? html`<${Badge} value=${verdict} />` : null}
      ${e.error_code ? html`<${Badge} value=${`error: ${e.error_code}`} tone="error" />` : null}
      ${drift ? html`<${Badge} value="goal drift" tone="warning" />` : null}
      ${
    spike
      ? html`<span title="more than 3× the average tokens of this session's earlier signals"><${Badge} value=${`token spike ${
        spike.toFixed(1)
      }×`} tone="warning" /></span>`
      : null
  }
      ${v?.message ? html`<div class="message">${v.message}</div>` : null}
      ${details?.since ? html`<${Drift} m=${details} />` : null}
      ${e.type === "refocus-ack" ? html`<div class="message">${answerOf(details)}</div>` : null}
    </div>
    <div class="nums">
      ${e.tokens_in || e.tokens_out ? html`<span>${tokens(e.tokens_in)} in · ${tokens(e.tokens_out)} out</span>` : null}
      ${e.cost_usd ? html`<span>${money(e.cost_usd)}</span>` : null}
      ${e.latency_ms != null ? html`<span>${Math.round(e.latency_ms)} ms</span>` : null}
    </div>
  </li>`
}
