import { Schema } from "effect"
import { Timestamp } from "./tenancy.ts"

/**
 * What the management API shows of the coding tools' own telemetry: productivity figures beside
 * spend, per user or team (GET /api/v1/productivity), and how each user is seen (GET /api/v1/coverage).
 */

// Finite, not Number: a Number allows the "Infinity" strings and its description is lost in the OpenAPI document.
const count = (description: string) => Schema.Finite.annotate({ description })

export const ProductivityFigures = Schema.Struct({
  lines_added: count("lines of code the tools added (Claude Code's claude_code.lines_of_code.count, type added)"),
  lines_removed: count("lines of code the tools removed"),
  commits: count("git commits the tools made (claude_code.commit.count)"),
  pull_requests: count("pull requests the tools opened (claude_code.pull_request.count)"),
  edits_accepted: count("edit tool uses accepted (claude_code.code_edit_tool.decision, accept)"),
  edits_rejected: count("edit tool uses rejected (claude_code.code_edit_tool.decision, reject)"),
  cost_usd: count("spend in the range, from the events (as GET /usage counts it)"),
  tokens_in: count("input tokens in the range, from the events"),
  tokens_out: count("output tokens in the range, from the events"),
  sessions: count("sessions with an event in the range")
}).annotate({ identifier: "ProductivityFigures" })
export type ProductivityFigures = typeof ProductivityFigures.Type

export const ProductivityGroupBy = Schema.Literals(["user", "team"])
export type ProductivityGroupBy = typeof ProductivityGroupBy.Type

export const ProductivityGroup = Schema.Struct({
  key: Schema.String.annotate({ description: "the user's or the team's id" }),
  name: Schema.String.annotate({ description: "the user's or the team's name" }),
  ...ProductivityFigures.fields
}).annotate({ identifier: "ProductivityGroup" })
export type ProductivityGroup = typeof ProductivityGroup.Type

export const CoverageSource = Schema.Literals(["hooks", "telemetry", "both", "none"])
export type CoverageSource = typeof CoverageSource.Type

export const CoverageUser = Schema.Struct({
  user_id: Schema.String,
  email: Schema.String,
  name: Schema.String,
  last_hook_at: Schema.NullOr(Timestamp).annotate({ description: "the newest signal a hook adapter sent; null when none" }),
  last_telemetry_at: Schema.NullOr(Timestamp).annotate({
    description: "the newest OTLP log record or productivity counter the user's tools exported; null when none"
  }),
  seen_through: CoverageSource.annotate({ description: "`hooks`, `telemetry`, `both` or `none` (never seen)" }),
  stopped_reporting: Schema.Boolean.annotate({
    description: "seen, but nothing from either source for `stale_after_days` days"
  })
}).annotate({ identifier: "CoverageUser" })
export type CoverageUser = typeof CoverageUser.Type

export const CoverageTotals = Schema.Struct({
  users: count("users of the org"),
  hooks: count("users seen through hooks only"),
  telemetry: count("users seen through telemetry only"),
  both: count("users seen through both"),
  none: count("users never seen"),
  stopped_reporting: count("users seen whose tools stopped reporting")
}).annotate({ identifier: "CoverageTotals" })
export type CoverageTotals = typeof CoverageTotals.Type
