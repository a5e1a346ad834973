import { Schema } from "effect"
import { parseInstant } from "../domain/keyset.ts"

/**
 * Query parameter schemas of the session and event lists. A value that does not decode is a
 * 400 `invalid_parameters` (the Envelope middleware maps decoding failures).
 */

const instantFormat = "ISO 8601 date-time with a zone (Z or ±hh:mm), or a date meaning midnight UTC"

/**
 * An ISO 8601 instant: a date-time with a zone (`2025-03-01T09:30:00Z`, `…+02:00`, fractional
 * seconds allowed) or a bare date (midnight UTC). Handlers pass it through `instant` to get the
 * normalized form the repositories give PostgreSQL.
 */
export const instantParam = (description: string) =>
  Schema.String.annotate({ description: `${description}; ${instantFormat}` }).pipe(
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
