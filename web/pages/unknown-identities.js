// The identities fleet credentials were refused for (no user of the org): who is missing, and how much.
import { html } from "htm/preact"
import { api } from "../api.js"
import { count, time } from "../format.js"
import { hrefOf } from "../route.js"
import { Loaded, useLoad } from "../ui.js"

/** A line on the Overview when fleet credentials refused someone; nothing otherwise. */
export const UnknownIdentities = () => {
  const state = useLoad(() => api("GET", "/fleet/unknown-identities"), [])
  return html`<${Loaded} state=${state}>${(/** @type {{ data: Array<any> }} */ answer) => {
    if (answer.data.length === 0) return null
    const records = answer.data.reduce((sum, u) => sum + u.count, 0)
    const shown = answer.data.slice(0, 5)
    return html`<p class="notice" role="status">
      Fleet credentials refused ${count(records)} records of ${count(answer.data.length)} unknown identities
      (${shown.map((u) => `${u.identity}, last ${time(u.last_seen)}`).join("; ")}${answer.data.length > shown.length ? "; …" : ""}).
      Add them in <a href=${hrefOf("/settings")}>Settings</a>, or let the org create them (PATCH /org unknown_identities).
    </p>`
  }}<//>`
}
