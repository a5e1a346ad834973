// How numbers and times read on every page.

const usd = new Intl.NumberFormat("en-US", { style: "currency", currency: "USD", minimumFractionDigits: 2, maximumFractionDigits: 4 })
const int = new Intl.NumberFormat("en-US")
const compact = new Intl.NumberFormat("en-US", { notation: "compact", maximumFractionDigits: 1 })

export const money = (/** @type {number} */ n) => usd.format(n)
export const count = (/** @type {number} */ n) => int.format(n)
export const tokens = (/** @type {number} */ n) => (n >= 10_000 ? compact.format(n) : int.format(n))

/** @param {string | null | undefined} iso */
export const time = (iso) => iso ? new Date(iso).toLocaleString(undefined, { dateStyle: "medium", timeStyle: "medium" }) : "—"

/** @param {number} seconds */
export const duration = (seconds) => {
  if (seconds < 60) return `${Math.round(seconds)} s`
  if (seconds < 3600) return `${Math.round(seconds / 60)} min`
  return `${(seconds / 3600).toFixed(1)} h`
}

/** A long id shortened for tables; the full id stays in the title. @param {string | null} id */
export const shortId = (id) => (id && id.length > 18 ? `${id.slice(0, 10)}…${id.slice(-6)}` : id ?? "—")

/**
 * The instant a calendar day starts in a time zone (the org's, which the API counts days in).
 * @param {string} timeZone @param {Date} day @param {"day" | "month"} unit
 */
export const startOf = (timeZone, day, unit) => {
  const parts = Object.fromEntries(
    new Intl.DateTimeFormat("en-US", { timeZone, year: "numeric", month: "numeric", day: "numeric" })
      .formatToParts(day).map((p) => [p.type, p.value])
  )
  const guess = Date.UTC(Number(parts.year), Number(parts.month) - 1, unit === "day" ? Number(parts.day) : 1)
  // The zone's offset at that moment: local wall time read back as UTC, minus the instant.
  const wall = Object.fromEntries(
    new Intl.DateTimeFormat("en-US", {
      timeZone,
      hourCycle: "h23",
      year: "numeric",
      month: "numeric",
      day: "numeric",
      hour: "numeric",
      minute: "numeric",
      second: "numeric"
    })
      .formatToParts(new Date(guess)).map((p) => [p.type, p.value])
  )
  const asUtc = Date.UTC(Number(wall.year), Number(wall.month) - 1, Number(wall.day), Number(wall.hour), Number(wall.minute), Number(wall.second))
  return new Date(guess - (asUtc - guess))
}

/** The day's key as the usage API names days (YYYY-MM-DD in the org's time zone). @param {string} timeZone */
export const dayKey = (timeZone, day = new Date()) => new Intl.DateTimeFormat("en-CA", { timeZone }).format(day)

/** The keys of the 31 days up to `to` (the usage API's default range), oldest first. @param {string} timeZone @param {string} to */
export const dayKeys = (timeZone, to) => [...new Set(Array.from({ length: 31 }, (_, i) => dayKey(timeZone, new Date(Date.parse(to) - (30 - i) * 86_400_000))))]
