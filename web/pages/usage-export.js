// A usage export to download: a period, what to group by and a format; the file comes from
// GET /api/v1/usage/export.
import { html } from "htm/preact"
import { useState } from "preact/hooks"
import { download } from "../api.js"
import { dayKey, startOf } from "../format.js"
import { ErrorBox } from "../ui.js"

const dimensions = /** @type {const} */ (["day", "user", "team", "project", "model"])

/**
 * The instant a date (YYYY-MM-DD, as a date input gives it) starts in the org's time zone: noon
 * UTC of the date names that calendar day in every zone but those past +12:00.
 * @param {string} tz @param {string} date
 */
const midnight = (tz, date) => startOf(tz, new Date(`${date}T12:00:00Z`), "day").toISOString()

/** The day after a date, as YYYY-MM-DD. @param {string} date */
const nextDay = (date) => new Date(Date.parse(`${date}T00:00:00Z`) + 86_400_000).toISOString().slice(0, 10)

/** @param {{ tz: string }} props */
export const UsageExport = ({ tz }) => {
  const today = dayKey(tz)
  const [from, setFrom] = useState(`${today.slice(0, 8)}01`)
  const [to, setTo] = useState(today)
  const [by, setBy] = useState(/** @type {Array<string>} */ (["day", "user", "project", "model"]))
  const [format, setFormat] = useState("csv")
  const [busy, setBusy] = useState(false)
  const [error, setError] = useState(/** @type {any} */ (null))
  const [saved, setSaved] = useState("")
  const toggle = (/** @type {string} */ d) => setBy(by.includes(d) ? by.filter((x) => x !== d) : [...by, d])
  /** @param {Event} e */
  const submit = async (e) => {
    e.preventDefault()
    setError(null)
    setSaved("")
    setBusy(true)
    try {
      // Both dates are whole days of the org's calendar: `to` is the last day included.
      setSaved(await download("/usage/export", { from: midnight(tz, from), to: midnight(tz, nextDay(to)), group_by: by.join(","), format }))
    } catch (err) {
      setError(err)
    } finally {
      setBusy(false)
    }
  }
  return html`<section aria-labelledby="export-title">
    <h2 id="export-title">Download usage</h2>
    <form class="panel" onSubmit=${submit} aria-label="Download usage">
      <label><span>From (first day)</span><input type="date" name="from" required value=${from} onInput=${(/** @type {any} */ e) =>
    setFrom(e.currentTarget.value)} /></label>
      <label><span>To (last day)</span><input type="date" name="to" required value=${to} onInput=${(/** @type {any} */ e) =>
    setTo(e.currentTarget.value)} /></label>
      <fieldset>
        <legend>One row per</legend>
        ${
    dimensions.map((d) =>
      html`<label class="check"><input type="checkbox" name=${`by-${d}`} checked=${by.includes(d)} onChange=${() => toggle(d)} /><span>${d}</span></label>`
    )
  }
      </fieldset>
      <label><span>Format</span><select name="format" value=${format} onChange=${(/** @type {any} */ e) => setFormat(e.currentTarget.value)}>
        <option value="csv">CSV (spreadsheets)</option>
        <option value="jsonl">JSON lines</option>
      </select></label>
      <p class="muted">Days are counted in the org's time zone, ${tz}. A user in several teams counts in each of them.</p>
      <button type="submit" disabled=${busy || by.length === 0}>${busy ? "Preparing…" : "Download"}</button>
      ${saved ? html`<p role="status">Saved ${saved}.</p>` : null}
    </form>
    ${error ? html`<${ErrorBox} error=${error} />` : null}
  </section>`
}
