import type { Order } from "./activity.ts"

/**
 * Instants given by clients (`from`, `to`, `before`) and the keyset cursors of time-ordered
 * lists (sessions by started_at, events by ts).
 */

const instantPattern = /^(\d{4})-(\d{2})-(\d{2})(?:T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|[+-](\d{2}):?(\d{2})))?$/i

const isLeap = (year: number) => (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0
const daysIn = (year: number, month: number) => month === 2 ? (isLeap(year) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31

/**
 * An ISO 8601 / RFC 3339 instant as PostgreSQL reads it unambiguously, or undefined when `input`
 * is not one. Accepted: a date-time with seconds optional, fractional seconds optional and a
 * zone (`Z` or `±hh:mm`) required, or a bare date, meaning midnight UTC. A date-time without a
 * zone is refused: it would mean whatever time zone the reader assumes.
 */
export const parseInstant = (input: string): string | undefined => {
  const m = instantPattern.exec(input)
  if (m === null) return undefined
  const [, y, mo, d, h, mi, s, , zone, zh, zm] = m
  const year = Number(y)
  const month = Number(mo)
  const day = Number(d)
  if (year < 1 || month < 1 || month > 12 || day < 1 || day > daysIn(year, month)) return undefined
  if (h === undefined) return `${y}-${mo}-${d}T00:00:00Z`
  if (Number(h) > 23 || Number(mi) > 59 || (s !== undefined && Number(s) > 59)) return undefined
  if (zone !== undefined && zone.toUpperCase() !== "Z" && (Number(zh) > 14 || Number(zm) > 59)) return undefined
  return input.toUpperCase()
}

/** Where a page ended: the sort key of its last item and the direction of the listing. */
export interface Position {
  readonly order: Order
  /** The item's timestamp as PostgreSQL printed it (microseconds, UTC), so no precision is lost. */
  readonly at: string
  readonly id: string
}

/** Opaque cursor: base64url of `{o, t, i}`. */
export const encodePosition = (p: Position): string => Buffer.from(JSON.stringify({ o: p.order, t: p.at, i: p.id })).toString("base64url")

/** The position inside a cursor, or undefined when the token is not one this service made. */
export const decodePosition = (cursor: string): Position | undefined => {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))
    if (typeof parsed !== "object" || parsed === null) return undefined
    if (!("o" in parsed && "t" in parsed && "i" in parsed)) return undefined
    const { o, t, i } = parsed
    if ((o !== "asc" && o !== "desc") || typeof t !== "string" || typeof i !== "string") return undefined
    const at = parseInstant(t)
    return at === undefined ? undefined : { order: o, at, id: i }
  } catch {
    return undefined
  }
}
