/**
 * Keyset pagination (spec §8). A cursor is an opaque token naming the last item of the page
 * just returned; the next page starts strictly after it, so inserts between requests neither
 * repeat nor skip items.
 */
export const defaultPageSize = 20
export const maxPageSize = 100

export interface Page<A> {
  readonly data: ReadonlyArray<A>
  /** Pass as `cursor` to get the next page; the empty string when there is no next page. */
  readonly cursor: string
  readonly has_more: boolean
}

export const encodeCursor = (lastKey: string): string => Buffer.from(JSON.stringify({ k: lastKey })).toString("base64url")

/** The key inside a cursor, or undefined when the token was not made by encodeCursor. */
export const decodeCursor = (cursor: string): string | undefined => {
  try {
    const parsed: unknown = JSON.parse(Buffer.from(cursor, "base64url").toString("utf8"))
    if (typeof parsed === "object" && parsed !== null && "k" in parsed && typeof parsed.k === "string") return parsed.k
    return undefined
  } catch {
    return undefined
  }
}

/** Given up to `limit + 1` rows fetched in page order, the page and its cursor. */
export const toPage = <A>(rows: ReadonlyArray<A>, limit: number, keyOf: (a: A) => string): Page<A> => {
  const has_more = rows.length > limit
  const data = has_more ? rows.slice(0, limit) : rows
  const last = data[data.length - 1]
  return { data, cursor: has_more && last !== undefined ? encodeCursor(keyOf(last)) : "", has_more }
}
