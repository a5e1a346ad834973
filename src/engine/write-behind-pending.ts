import type { EventRow, GoalRow, SessionRow } from "../domain/projection-rows.ts"
import type { ScopeUsageRow } from "../domain/scope-usage.ts"
import type { OutboxEvent } from "../domain/notices.ts"
import type { ChannelRecipient, WebhookRecipient } from "../domain/recipients.ts"
import type { ActorSnapshot, BatchWrite } from "../store/batch-write.ts"
import type { FoldedWrite } from "./write-behind.ts"

type Watched = BatchWrite["watch"][number]

/** The folded batches not yet committed, merged into one write: the latest row of each key wins. */
export class Pending {
  readonly sessions = new Map<string, SessionRow>()
  readonly events: Array<EventRow> = []
  readonly notices: Array<OutboxEvent> = []
  readonly recipients = { webhooks: [] as Array<WebhookRecipient>, channels: [] as Array<ChannelRecipient> }
  readonly actors = new Map<string, ActorSnapshot>()
  readonly goals = new Map<string, GoalRow>()
  readonly scopeUsage = new Map<string, ScopeUsageRow>()
  readonly watch = new Map<string, Watched>()
  announce: Array<string> | undefined
  records = 0
  /** Whether anything was added (a flush of snapshots adds no record). */
  empty = true
  nextOffset: number
  /** When its oldest batch was folded (its verdicts answered), `performance.now()`. */
  readonly since = performance.now()
  readonly fromOffset: number
  readonly seq: number
  constructor(fromOffset: number, seq: number) {
    this.fromOffset = fromOffset
    this.seq = seq
    this.nextOffset = fromOffset
  }
  add(write: FoldedWrite, records: number) {
    for (const s of write.sessions) this.sessions.set(s.id, s)
    for (const e of write.events) this.events.push(e)
    for (const n of write.notices) this.notices.push(n)
    for (const r of write.recipients.webhooks) this.recipients.webhooks.push(r)
    for (const r of write.recipients.channels) this.recipients.channels.push(r)
    for (const a of write.actors) this.actors.set(a.user_id, a)
    for (const g of write.goals) this.goals.set(g.id, g)
    for (const u of write.scopeUsage) this.scopeUsage.set(`${u.org_id}\0${u.environment}\0${u.scope}\0${u.scope_id}\0${u.window_key}`, u)
    for (const w of write.watch) this.watch.set(`${w.org_id}\0${w.environment}\0${w.scope}\0${w.scope_id}\0${w.window_key}`, w)
    if (write.announce !== undefined) (this.announce ??= []).push(...write.announce)
    this.records += records
    this.empty = false
    this.nextOffset = write.nextOffset
  }
  toWrite(log: string, partition: number): BatchWrite {
    return {
      log,
      partition,
      fromOffset: this.fromOffset,
      nextOffset: this.nextOffset,
      sessions: [...this.sessions.values()],
      events: this.events,
      notices: this.notices,
      recipients: this.recipients,
      actors: [...this.actors.values()],
      goals: [...this.goals.values()],
      scopeUsage: [...this.scopeUsage.values()],
      watch: [...this.watch.values()],
      announce: this.announce
    }
  }
}
