import type { SpendReport } from "./report-schedules.ts"
import { renderReport } from "./report-text.ts"

/**
 * What a notification says, in words a person reads: a title, a few lines, and a link to the
 * dashboard when the service knows its public address. Pure: the chat and e-mail formats are
 * built from this (src/notifications/formats.ts).
 */

/** What a queued notification is about: the webhook envelope of its event, or an admin alert. */
export interface NotificationFacts {
  readonly type: string
  readonly ts: string
  readonly data: Readonly<Record<string, unknown>>
  /** Alerts carry their own sentence. */
  readonly message?: string | undefined
}

export interface NotificationContext {
  readonly facts: NotificationFacts
  /** How many firings it covers: 1, or for a summary the firings after the first in its window. */
  readonly firings: number
  readonly summary: boolean
  readonly windowSeconds: number
  /** The user named by the facts as people know them (name and e-mail), when known. */
  readonly userLabel: string | undefined
  /** PUBLIC_BASE_URL, without a trailing slash. */
  readonly baseUrl: string | undefined
}

export interface Rendered {
  readonly title: string
  readonly lines: ReadonlyArray<string>
  readonly link: string | undefined
}

const str = (v: unknown): string => (typeof v === "string" ? v : v === null || v === undefined ? "" : String(v))
const num = (v: unknown): number => (typeof v === "number" ? v : Number(v))

const grouped = (n: number, digits = 0) => n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits })

/** An amount of a budget metric: dollars, or tokens. */
export const amount = (metric: string, value: number): string =>
  metric === "cost_usd" ? `$${grouped(value, value < 1 && value > 0 ? 4 : 2)}` : `${grouped(Math.round(value))} tokens`

const span = (seconds: number): string => seconds % 3600 === 0 ? `${seconds / 3600} h` : seconds % 60 === 0 ? `${seconds / 60} min` : `${seconds} s`

const times = (n: number) => (n === 1 ? "once" : `${grouped(n)} times`)

const scopeText = (scope: string, scopeId: string) => (scope === "org" ? "the org" : `${scope} ${scopeId}`)

/** A page of the dashboard (served at the base URL's root; its pages are hash routes). */
const dashboard = (base: string | undefined, path: string) => (base === undefined ? undefined : `${base}/#/${path}`)

export const render = (ctx: NotificationContext): Rendered => {
  const { facts, baseUrl } = ctx
  const d = facts.data
  const who = ctx.userLabel ?? str(d.user_id)
  switch (facts.type) {
    case "rule.triggered": {
      const rule = `Rule “${str(d.rule_name)}”`
      const session = str(d.session_id)
      if (ctx.summary) {
        return {
          title: `${rule} fired ${times(ctx.firings)} more for ${who} within ${span(ctx.windowSeconds)}`,
          lines: [
            `After the first firing (already sent), the rule fired ${times(ctx.firings)} more in the same ` +
            `${span(ctx.windowSeconds)} window for ${who}; the last on model ${str(d.model) || "(none named)"}.`
          ],
          link: dashboard(baseUrl, "rules")
        }
      }
      return {
        title: `${rule} fired for ${who}`,
        lines: [
          `User: ${who}`,
          `Model: ${str(d.model) || "(none named)"}`,
          `Action: ${str(d.action)}`,
          `Session: ${session}`,
          `Further firings for this user within ${span(ctx.windowSeconds)} are summed up in one message.`
        ],
        link: dashboard(baseUrl, `sessions/${session}`)
      }
    }
    case "budget.warning":
    case "budget.exceeded": {
      const metric = str(d.metric)
      const threshold = num(d.threshold)
      const current = num(d.current)
      const pct = threshold > 0 ? Math.round((current / threshold) * 100) : 0
      const what = facts.type === "budget.warning" ? `reached ${pct}% of its threshold` : "was exceeded"
      return {
        title: `Budget “${str(d.rule_name)}” ${what}: ${amount(metric, current)} of ${amount(metric, threshold)}`,
        lines: [
          `Spent: ${amount(metric, current)} of ${amount(metric, threshold)} (${pct}%)`,
          `Scope: ${scopeText(str(d.scope), str(d.scope_id))}`,
          `Window: ${str(d.window)}, metric ${metric}`
        ],
        link: dashboard(baseUrl, "rules")
      }
    }
    case "anomaly.detected": {
      const kind = str(d.anomaly_type).replaceAll("_", " ")
      const lines = [
        `User: ${who}`,
        `Observed: ${grouped(num(d.observed))} against a baseline of ${grouped(num(d.baseline_avg))} (+${grouped(num(d.deviation_pct))}%)`,
        `Session: ${str(d.session_id)}`
      ]
      return ctx.summary
        ? {
          title: `Unusual activity (${kind}) ${times(ctx.firings)} more for ${who} within ${span(ctx.windowSeconds)}`,
          lines: [`The last: observed ${grouped(num(d.observed))} against a baseline of ${grouped(num(d.baseline_avg))}.`],
          link: dashboard(baseUrl, `sessions/${str(d.session_id)}`)
        }
        : { title: `Unusual activity for ${who}: ${kind}`, lines, link: dashboard(baseUrl, `sessions/${str(d.session_id)}`) }
    }
    case "webhook.failing":
      return { title: `Webhook failing: deliveries paused`, lines: [facts.message ?? ""], link: dashboard(baseUrl, "alerts") }
    case "channel.failing":
      return { title: `Notification channel failing: messages paused`, lines: [facts.message ?? ""], link: dashboard(baseUrl, "alerts") }
    case "report.spend":
      return renderReport(d as unknown as SpendReport, dashboard(baseUrl, "overview"))
    case "test":
      return {
        title: `Test message from signal-engine`,
        lines: [`The channel “${str(d.channel_name)}” is set up: notify rules and admin alerts sent to it arrive like this.`],
        link: undefined
      }
    default:
      return { title: facts.type, lines: facts.message === undefined ? [] : [facts.message], link: undefined }
  }
}
