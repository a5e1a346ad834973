import { Schema } from "effect"
import { parseInstant } from "../domain/keyset.ts"
import { matching } from "../domain/text.ts"

/**
 * Query parameter schemas of the session and event lists. A value that does not decode is a
 * 400 `invalid_parameters` (the Envelope middleware maps decoding failures).
 */

const instantFormat = "ISO 8601 date-time with a zone (Z or ±hh:mm), or a date meaning midnight UTC"

/**
 * The shape of an instant, for the documents: month and day ranges per month, 29 February only
 * in leap years (Gregorian: every 4th year, centuries only every 400th), hours, minutes, seconds
 * and zone offsets in range. Exact, so that a value the document allows is one parseInstant takes.
 */
const year = "(?:[1-9][0-9]{3}|0[1-9][0-9]{2}|00[1-9][0-9]|000[1-9])"
const leapYear = "(?:[0-9]{2}(?:0[48]|[2468][048]|[13579][26])|(?:0[48]|[2468][048]|[13579][26])00)"
const day31 = "(?:0[13578]|1[02])-(?:0[1-9]|[12][0-9]|3[01])"
const day30 = "(?:0[469]|11)-(?:0[1-9]|[12][0-9]|30)"
const dayFeb = "02-(?:0[1-9]|1[0-9]|2[0-8])"
export const instantShape = new RegExp(
  `^(?:${year}-(?:${day31}|${day30}|${dayFeb})|${leapYear}-02-29)` +
    "(?:T(?:[01][0-9]|2[0-3]):[0-5][0-9](?::[0-5][0-9](?:\\.[0-9]{1,9})?)?(?:[Zz]|[+-](?:0[0-9]|1[0-4]):?[0-5][0-9]))?$"
)

/**
 * An ISO 8601 instant: a date-time with a zone (`2025-03-01T09:30:00Z`, `…+02:00`, fractional
 * seconds allowed) or a bare date (midnight UTC). Handlers pass it through `instant` to get the
 * normalized form the repositories give PostgreSQL.
 */
export const instantParam = (description: string) =>
  Schema.String.annotate({ description: `${description}; ${instantFormat}` }).pipe(
    Schema.check(matching(instantShape, "expected an ISO 8601 date-time with a zone (e.g. 2025-03-01T09:30:00Z) or a date (YYYY-MM-DD)")),
    Schema.check(Schema.makeFilter((s: string) =>
      parseInstant(s) !== undefined ||
      "expected an ISO 8601 date-time with a zone (e.g. 2025-03-01T09:30:00Z) or a date (YYYY-MM-DD)"
    ))
  )

export const instant = (s: string | undefined): string | undefined => (s === undefined ? undefined : parseInstant(s))

export const OrderParam = Schema.Literals(["desc", "asc"]).annotate({
  description: "`desc` (default, newest first) or `asc`"
})

export const BooleanParam = Schema.Literals(["true", "false"])
