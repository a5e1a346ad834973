// Small shared pieces: loading and error states, tables, pagination, filters, confirmations.
import { html } from "htm/preact"
import { useCallback, useEffect, useRef, useState } from "preact/hooks"
import { userNames } from "./users.js"

/**
 * Loads something once per change of `deps`; `reload` asks again.
 * @template T
 * @param {() => Promise<T>} load
 * @param {ReadonlyArray<unknown>} deps
 */
export const useLoad = (load, deps) => {
  const [state, setState] = useState(/** @type {{ data?: T, error?: Error, loading: boolean }} */ ({ loading: true }))
  const [tick, setTick] = useState(0)
  useEffect(() => {
    let live = true
    setState((s) => ({ ...s, loading: true }))
    load().then(
      (data) => live && setState({ data, loading: false }),
      (error) => live && setState({ error, loading: false })
    )
    return () => {
      live = false
    }
  }, [...deps, tick])
  const reload = useCallback(() => setTick((t) => t + 1), [])
  return { ...state, reload }
}

/**
 * Cursor pagination as the API does it: a cursor for the next page, and the cursors seen so far
 * to step back (the API has no previous-page cursor).
 * @param {(cursor: string) => Promise<{ data: Array<any>, cursor: string, has_more: boolean, total?: number }>} load
 * @param {ReadonlyArray<unknown>} deps what resets to the first page (the filters)
 */
export const usePages = (load, deps) => {
  // The cursors belong to the filters they were made with: new filters start at the first page
  // in the same render (a reset in an effect would fetch once more with a stale cursor).
  const key = JSON.stringify(deps)
  const [trail, setTrail] = useState(/** @type {{ key: string, cursors: Array<string> }} */ ({ key, cursors: [""] }))
  const cursors = trail.key === key ? trail.cursors : [""]
  const setCursors = (/** @type {Array<string>} */ next) => setTrail({ key, cursors: next })
  const cursor = cursors[cursors.length - 1] ?? ""
  const page = useLoad(() => load(cursor), [...deps, cursor])
  return {
    ...page,
    pageNumber: cursors.length,
    next: () => page.data?.has_more && setCursors([...cursors, page.data.cursor]),
    previous: () => cursors.length > 1 && setCursors(cursors.slice(0, -1))
  }
}

/** @param {{ pages: ReturnType<typeof usePages>, label?: string }} props */
export const Pager = ({ pages, label = "page" }) => {
  const hasMore = pages.data?.has_more ?? false
  if (!hasMore && pages.pageNumber === 1) return null
  return html`<nav class="pager" aria-label=${`${label} pages`}>
    <button type="button" onClick=${pages.previous} disabled=${pages.pageNumber === 1}>← Previous</button>
    <span>Page ${pages.pageNumber}</span>
    <button type="button" onClick=${pages.next} disabled=${!hasMore}>Next →</button>
  </nav>`
}

/** @param {{ error: any, onRetry?: () => void }} props */
/**
 * A change made from a list (enable, delete, send a test…): `act(change)` runs it, then reloads
 * the list; what it throws is kept in `error` for an ErrorBox, cleared by the next change.
 * @param {() => void} reload
 */
export const useAction = (reload) => {
  const [error, setError] = useState(/** @type {any} */ (null))
  /** @param {() => Promise<unknown>} change */
  const act = async (change) => {
    setError(null)
    try {
      await change()
      reload()
    } catch (err) {
      setError(err)
    }
  }
  return { error, act }
}

export const ErrorBox = ({ error, onRetry }) =>
  html`<div class="error" role="alert">
    <strong>Something went wrong:</strong> ${error?.message ?? String(error)}
    ${error?.code === "insufficient_scope" || error?.status === 403 ? html` <span>(this key lacks the scope for it)</span>` : null}
    ${onRetry ? html` <button type="button" onClick=${onRetry}>Try again</button>` : null}
  </div>`

/** @param {{ children: any }} props */
export const Empty = ({ children }) => html`<p class="empty">${children}</p>`

export const Loading = () => html`<p class="loading" aria-live="polite">Loading…</p>`

/**
 * What a loaded thing shows: loading, its error, or the content.
 * @param {{ state: { data?: any, error?: any, loading: boolean, reload?: () => void }, children: (data: any) => any }} props
 */
export const Loaded = ({ state, children }) => {
  if (state.error) return html`<${ErrorBox} error=${state.error} onRetry=${state.reload} />`
  if (state.data === undefined) return html`<${Loading} />`
  return children(state.data)
}

/**
 * @typedef {{ label: string, cell: (row: any) => any, className?: string }} Column
 * @param {{ columns: Array<Column>, rows: Array<any>, empty: any, rowClass?: (row: any) => string, caption?: string }} props
 */
export const Table = ({ columns, rows, empty, rowClass, caption }) => {
  if (rows.length === 0) return html`<${Empty}>${empty}<//>`
  return html`<div class="table-wrap"><table>
    ${caption ? html`<caption>${caption}</caption>` : null}
    <thead><tr>${columns.map((c) => html`<th scope="col" class=${c.className ?? ""}>${c.label}</th>`)}</tr></thead>
    <tbody>${
    rows.map((row) =>
      html`<tr class=${rowClass?.(row) ?? ""}>
      ${columns.map((c) => html`<td class=${c.className ?? ""} data-label=${c.label}><div class="cell">${c.cell(row)}</div></td>`)}
    </tr>`
    )
  }</tbody>
  </table></div>`
}

/**
 * A filter form: its fields start from the current values and apply on submit. A `user` field
 * takes a user id and suggests the org's users by name.
 * @param {{ fields: Array<{ name: string, label: string, type?: string, options?: Array<[string, string]> }>, values: Record<string, string>, onApply: (values: Record<string, string>) => void }} props
 */
export const Filters = ({ fields, values, onApply }) => {
  const [users, setUsers] = useState(/** @type {Map<string, string>} */ (new Map()))
  useEffect(() => {
    if (fields.some((f) => f.type === "user")) userNames().then(setUsers)
  }, [])
  /** @param {SubmitEvent} e */
  const submit = (e) => {
    e.preventDefault()
    const form = /** @type {HTMLFormElement} */ (e.currentTarget)
    /** @type {Record<string, string>} */
    const next = {}
    for (const f of fields) {
      const input = /** @type {HTMLInputElement} */ (form.elements.namedItem(f.name))
      const value = f.type === "checkbox" ? (input.checked ? "true" : "") : input.value.trim()
      if (value) next[f.name] = f.type === "datetime-local" ? new Date(value).toISOString() : value
    }
    onApply(next)
  }
  // Keyed by the values: applying or clearing starts the fields afresh from them.
  return html`<form class="filters" key=${JSON.stringify(values)} onSubmit=${submit} aria-label="Filters">
    ${
    fields.map((f) =>
      html`<label class=${f.type === "checkbox" ? "check" : ""}>
      ${f.type === "checkbox" ? null : html`<span>${f.label}</span>`}
      ${
        f.options
          ? html`<select name=${f.name}>${options(f.options, values[f.name] ?? "")}</select>`
          : f.type === "checkbox"
          ? html`<input type="checkbox" name=${f.name} defaultChecked=${values[f.name] === "true"} />`
          : f.type === "user"
          ? html`<input name=${f.name} list=${`users-${f.name}`} defaultValue=${values[f.name] ?? ""} autocomplete="off" />
            <datalist id=${`users-${f.name}`}>${[...users].map(([id, name]) => html`<option value=${id}>${name}</option>`)}</datalist>`
          : html`<input type=${f.type ?? "text"} name=${f.name} defaultValue=${
            f.type === "datetime-local" ? toLocalInput(values[f.name]) : values[f.name] ?? ""
          } />`
      }
      ${f.type === "checkbox" ? html`<span>${f.label}</span>` : null}
    </label>`
    )
  }
    <div class="filter-actions">
      <button type="submit" class="primary">Apply</button>
      <button type="button" onClick=${() => onApply({})}>Clear</button>
    </div>
  </form>`
}

/** An ISO instant as a datetime-local input shows it (local time). @param {string | undefined} iso */
const toLocalInput = (iso) => {
  if (!iso) return ""
  const d = new Date(iso)
  return new Date(d.getTime() - d.getTimezoneOffset() * 60_000).toISOString().slice(0, 16)
}

/**
 * A destructive action asks once more, in place (a native dialog would hide the page).
 * @param {{ label: string, confirmLabel: string, onConfirm: () => Promise<unknown> | void }} props
 */
export const ConfirmButton = ({ label, confirmLabel, onConfirm }) => {
  const [asking, setAsking] = useState(false)
  const yes = useRef(/** @type {HTMLButtonElement | null} */ (null))
  useEffect(() => {
    if (asking) yes.current?.focus()
  }, [asking])
  if (!asking) return html`<button type="button" class="danger" onClick=${() => setAsking(true)}>${label}</button>`
  return html`<span class="confirm" role="group" aria-label=${confirmLabel}>
    <span>${confirmLabel}</span>
    <button type="button" class="danger" ref=${yes} onClick=${async () => {
    await onConfirm()
    setAsking(false)
  }}>Yes, ${label.toLowerCase()}</button>
    <button type="button" onClick=${() => setAsking(false)}>Cancel</button>
  </span>`
}

/**
 * A secret shown once (a new key): selectable, with a copy button, and said to be shown once.
 * @param {{ label: string, value: string, onDone: () => void }} props
 */
export const ShownOnce = ({ label, value, onDone }) => {
  const [copied, setCopied] = useState(false)
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value)
      setCopied(true)
    } catch {
      setCopied(false)
    }
  }
  return html`<div class="shown-once" role="status">
    <p><strong>${label}</strong> — copy it now: it is shown only once.</p>
    <code class="secret">${value}</code>
    <div class="row">
      <button type="button" class="primary" onClick=${copy}>${copied ? "Copied" : "Copy"}</button>
      <button type="button" onClick=${onDone}>Done</button>
    </div>
  </div>`
}

/**
 * The options of a select the user changes freely: the first render picks `initial`, later
 * renders leave the choice alone (a select's `value` would be reset on every render).
 * @param {Array<string | [string, string]>} values [value, label] or value
 * @param {string} initial
 */
export const options = (values, initial) =>
  values.map((o) => {
    const [v, label] = typeof o === "string" ? [o, o] : o
    return html`<option value=${v} selected=${v === initial}>${label}</option>`
  })

/** @param {{ value: string, tone?: string }} props */
export const Badge = ({ value, tone }) => html`<span class=${`badge ${tone ?? value}`}>${value}</span>`
