// A webhook's recent deliveries (GET /webhooks/:id/deliveries): each event's status and every
// attempt, so a failing receiver's answers are there to read.
import { html } from "htm/preact"
import { api } from "../api.js"
import { time } from "../format.js"
import { Badge, Loaded, Pager, usePages } from "../ui.js"

/** @param {{ webhookId: string }} props */
export const Deliveries = ({ webhookId }) => {
  const pages = usePages((cursor) => api("GET", `/webhooks/${webhookId}/deliveries`, { query: { limit: 10, cursor } }), [webhookId])
  return html`<section class="deliveries" aria-label="Recent deliveries">
    <${Loaded} state=${pages}>${(/** @type {any} */ page) =>
    page.data.length === 0
      ? html`<p class="muted">Nothing delivered yet: events this webhook subscribes to appear here.</p>`
      : html`<ol class="delivery-list">${
        page.data.map((/** @type {any} */ d) =>
          html`<li>
          <div class="row">
            <strong>${d.type}</strong>
            <${Badge} value=${d.status} tone=${d.status === "delivered" ? "ok" : d.status === "failed" ? "exceeded" : "warning"} />
            <small>${time(d.created_at)}${d.next_attempt_at ? ` · next try ${time(d.next_attempt_at)}` : ""}</small>
          </div>
          <ul class="attempts">${
            d.attempts.map((/** @type {any} */ a) =>
              html`<li class=${a.error ? "bad" : ""}>
            Attempt ${a.attempt}: ${a.status_code === null ? "no answer" : `HTTP ${a.status_code}`}${a.error ? ` — ${a.error}` : ""}
            <small> · ${time(a.attempted_at)}</small>
          </li>`
            )
          }</ul>
        </li>`
        )
      }</ol>
        <${Pager} pages=${pages} label="Deliveries" />`}<//>
  </section>`
}
