import { Schema } from "effect"

/**
 * A usage export: one row per combination of the chosen dimensions (day, user, team, project,
 * model) in a time range, with the same figures as the usage report. Plain data; the store
 * streams the rows and the HTTP layer writes them as CSV or JSON lines.
 */

export const exportDimensions = ["day", "user", "team", "project", "model"] as const
export type ExportDimension = typeof exportDimensions[number]

export const ExportFormat = Schema.Literals(["csv", "jsonl"])
export type ExportFormat = typeof ExportFormat.Type

/** What an export groups by when the request does not say: everything but teams (no double counting). */
export const defaultExportDimensions: ReadonlyArray<ExportDimension> = ["day", "user", "project", "model"]

/** `group_by`'s shape: dimensions joined by commas, no spaces. */
export const exportDimensionsShape = new RegExp(`^(?:${exportDimensions.join("|")})(?:,(?:${exportDimensions.join("|")}))*$`)

/**
 * Parses `group_by` (shaped as exportDimensionsShape): a comma-separated set of dimensions, a
 * repeated one counted once. The result is in the canonical order (day, user, team, project,
 * model), so the columns do not depend on how the client spelled the list.
 */
export const parseExportDimensions = (input: string | undefined): ReadonlyArray<ExportDimension> => {
  if (input === undefined) return defaultExportDimensions
  const parts = input.split(",")
  return exportDimensions.filter((d) => parts.includes(d))
}

/** One exported row: the dimensions asked for (others are absent) and the figures. */
export interface ExportRow {
  readonly day?: string
  readonly user_id?: string
  readonly user_email?: string | null
  readonly user_name?: string | null
  readonly team_id?: string | null
  readonly team_name?: string | null
  readonly project_id?: string | null
  readonly project_name?: string | null
  readonly model?: string | null
  readonly signals: number
  readonly sessions: number
  readonly tokens_in: number
  readonly tokens_out: number
  readonly cost_usd: number
  readonly error_count: number
}

/** The columns each dimension contributes, in order. */
const dimensionColumns: Record<ExportDimension, ReadonlyArray<keyof ExportRow>> = {
  day: ["day"],
  user: ["user_id", "user_email", "user_name"],
  team: ["team_id", "team_name"],
  project: ["project_id", "project_name"],
  model: ["model"]
}

const figureColumns: ReadonlyArray<keyof ExportRow> = ["signals", "sessions", "tokens_in", "tokens_out", "cost_usd", "error_count"]

/** The columns of an export by these dimensions: the CSV header, and the keys of every JSON line. */
export const exportColumns = (dimensions: ReadonlyArray<ExportDimension>): ReadonlyArray<keyof ExportRow> => [
  ...dimensions.flatMap((d) => dimensionColumns[d]),
  ...figureColumns
]

/**
 * A text cell a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, tab, carriage return first:
 * a user named `=HYPERLINK(…)`) gets a leading `'`, as OWASP advises for CSV exports; the JSON
 * lines keep every value as it is.
 */
const inert = (cell: string): string => (/^[=+\-@\t\r]/.test(cell) ? `'${cell}` : cell)

/** A row as a CSV record: its cells in column order, a missing value (no project, say) empty. */
export const csvRecord = (row: ExportRow, columns: ReadonlyArray<keyof ExportRow>): ReadonlyArray<string | number> =>
  columns.map((c) => {
    const value = row[c] ?? ""
    return typeof value === "string" ? inert(value) : value
  })

/** A row as a JSON line's object: its columns in order, a missing value null. */
export const jsonRecord = (row: ExportRow, columns: ReadonlyArray<keyof ExportRow>): Record<string, string | number | null> =>
  Object.fromEntries(columns.map((c) => [c, row[c] ?? null]))

/** The file name a download is saved as: what and which range, e.g. `usage-2025-03-01-to-2025-04-01.csv`. */
export const exportFileName = (from: string, to: string, format: ExportFormat): string => `usage-${from.slice(0, 10)}-to-${to.slice(0, 10)}.${format}`
