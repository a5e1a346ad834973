import type { ReportEntry, ReportTotals, SpendReport } from "./report-schedules.ts"

/**
 * What a scheduled spend report says, in the shape notification-text gives every message (a
 * title, lines, a link), so each channel kind formats it as it formats alerts. Pure.
 */

const usd = (v: number) => `$${v.toLocaleString("en-US", { minimumFractionDigits: 2, maximumFractionDigits: 2 })}`
const count = (v: number) => Math.round(v).toLocaleString("en-US")

/** The change against the previous period, as people read it: "+25% from $80.00", or "new" when it was 0. */
export const change = (now: number, before: number): string => {
  if (before === 0) return now === 0 ? "no change" : "new this period"
  const pct = Math.round(((now - before) / before) * 100)
  return `${pct >= 0 ? "+" : ""}${pct}% from ${usd(before)}`
}

/** The period's days as the org names them: the end is exclusive, so the last day shown is the day before it. */
const days = (report: SpendReport) => {
  const day = (iso: string) => new Date(iso).toLocaleDateString("en-CA", { timeZone: report.time_zone })
  const lastDay = new Date(Date.parse(report.to) - 1)
  return `${day(report.from)} to ${day(lastDay.toISOString())} (${report.time_zone})`
}

const top = (heading: string, entries: ReadonlyArray<ReportEntry>): ReadonlyArray<string> =>
  entries.length === 0
    ? []
    : [`${heading}: ${entries.map((e) => `${e.label} ${usd(e.cost_usd)} (${count(e.tokens)} tokens)`).join("; ")}`]

const totalsLine = (t: ReportTotals) => `Spend: ${usd(t.cost_usd)}, ${count(t.tokens)} tokens, ${count(t.signals)} signals in ${count(t.sessions)} sessions`

export const renderReport = (report: SpendReport, link: string | undefined) => ({
  title: `${report.period === "weekly" ? "Weekly" : "Monthly"} spend report “${report.schedule_name}”: ${usd(report.totals.cost_usd)}`,
  lines: [
    `Period: ${days(report)}`,
    totalsLine(report.totals),
    `Change: ${change(report.totals.cost_usd, report.previous.cost_usd)} (tokens ${count(report.previous.tokens)} → ${count(report.totals.tokens)})`,
    ...top("Top users", report.top_users),
    ...top("Top teams", report.top_teams),
    ...top("Top models", report.top_models)
  ],
  link
})
