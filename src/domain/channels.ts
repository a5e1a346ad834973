import { Schema } from "effect"
import { Timestamp } from "./tenancy.ts"
import { NotFoundRefusal, Refusal } from "./refusal.ts"

/**
 * Notification channels: where messages for people go. Chat channels post to an incoming-webhook
 * URL in their service's format; e-mail channels send through the operator's SMTP server.
 */
export const ChannelKind = Schema.Literals(["slack", "teams", "discord", "email"])
export type ChannelKind = typeof ChannelKind.Type

/** Where one channel's messages go: its decrypted URL (chat) or its recipients (e-mail). */
export interface ChannelTarget {
  readonly kind: ChannelKind
  readonly url: string | null
  readonly addresses: ReadonlyArray<string>
}

export const isChatKind = (kind: ChannelKind): boolean => kind !== "email"

/** Bounds of a channel's coalescing window, in seconds (default 5 minutes). */
export const coalesceBounds = { minimum: 1, maximum: 86_400, default: 300 } as const
/** Most recipients one e-mail channel may have. */
export const maxAddresses = 20

export const Channel = Schema.Struct({
  id: Schema.String.annotate({ description: "prefix ch_" }),
  name: Schema.String,
  kind: ChannelKind.annotate({
    description: "slack (Slack incoming webhook JSON {text, blocks}; Mattermost and others accept it), teams (Microsoft " +
      "Teams incoming webhook / Workflows, an Adaptive Card), discord ({content}), email (SMTP_URL of the operator)"
  }),
  url: Schema.NullOr(Schema.String).annotate({
    description: "chat kinds: the incoming-webhook URL redacted to its origin (\"https://hooks.slack.com/…\"); the full URL " +
      "is a secret, stored encrypted and never returned. null for email"
  }),
  addresses: Schema.Array(Schema.String).annotate({ description: "email: the recipients; [] for chat kinds" }),
  coalesce_seconds: Schema.Int.annotate({
    description: "the coalescing window: a rule (or anomaly) firing again for the same user within it adds to one summary " +
      "message sent when the window ends, instead of a message per firing"
  }),
  enabled: Schema.Boolean,
  failing: Schema.Boolean.annotate({
    description: "true after 5 failed attempts of a message: messages are paused (they still queue) until PATCH {enabled: true}"
  }),
  created_at: Timestamp,
  updated_at: Schema.NullOr(Timestamp)
}).annotate({ identifier: "Channel" })
export type Channel = typeof Channel.Type

/** What create and update may set, before validation. */
export interface ChannelDraft {
  readonly name: string
  readonly kind: ChannelKind
  readonly url: string | undefined
  readonly addresses: ReadonlyArray<string>
  readonly coalesce_seconds: number
}

const emailPattern = /^[^\s@<>,;"]+@[^\s@<>,;"]+\.[^\s@<>,;"]+$/

/** Field-level problems (422) that need no IO; the URL policy is checked separately. */
export const channelProblems = (draft: ChannelDraft): ReadonlyArray<string> => {
  const problems: Array<string> = []
  if (draft.name.trim().length === 0) problems.push("name: must not be blank")
  if (isChatKind(draft.kind)) {
    if (draft.url === undefined) problems.push(`url: required for a ${draft.kind} channel (its incoming-webhook URL)`)
    if (draft.addresses.length > 0) problems.push(`addresses: only an email channel has addresses`)
  } else {
    if (draft.url !== undefined) problems.push("url: an email channel has addresses, not a url")
    if (draft.addresses.length === 0) problems.push("addresses: an email channel needs at least one address")
    if (draft.addresses.length > maxAddresses) problems.push(`addresses: at most ${maxAddresses}`)
    const bad = draft.addresses.filter((a) => !emailPattern.test(a))
    if (bad.length > 0) problems.push(`addresses: not e-mail addresses: ${bad.map((a) => JSON.stringify(a)).join(", ")}`)
  }
  const w = draft.coalesce_seconds
  if (!Number.isInteger(w) || w < coalesceBounds.minimum || w > coalesceBounds.maximum) {
    problems.push(`coalesce_seconds: must be between ${coalesceBounds.minimum} and ${coalesceBounds.maximum}, got ${w}`)
  }
  return problems
}

/** The origin of a chat URL, for display: the rest of it (path, query) is the secret part. */
export const redactUrl = (url: string): string => {
  try {
    return `${new URL(url).origin}/…`
  } catch {
    return "…"
  }
}

/**
 * The channel ids a rule's action_config names, or why they are not a list of ids (422).
 * `channels` is optional; an empty list is allowed (the rule then notifies webhooks only).
 */
export const channelIdsOf = (
  action: string,
  actionConfig: Readonly<Record<string, unknown>>
): { readonly ids: ReadonlyArray<string> } | { readonly problem: string } => {
  const channels = actionConfig.channels
  if (channels === undefined) return { ids: [] }
  if (!Array.isArray(channels) || channels.some((c) => typeof c !== "string")) {
    return { problem: "action_config.channels: must be a list of channel ids (ch_…)" }
  }
  if (action !== "notify" && channels.length > 0) {
    return { problem: "action_config.channels: only a notify rule sends to channels" }
  }
  if (channels.length > 20) return { problem: "action_config.channels: at most 20 channels" }
  return { ids: [...new Set(channels as ReadonlyArray<string>)] }
}

export class ChannelNotFound extends NotFoundRefusal("ChannelNotFound", "channel") {}

/** A channel's fields break the rules of channelProblems. */
export class ChannelInvalid extends Refusal("ChannelInvalid", 422, "validation_error") {
  constructor(problems: ReadonlyArray<string>) {
    super(problems.join("; "))
  }
}

export class SmtpNotConfigured extends Refusal("SmtpNotConfigured", 422, "smtp_not_configured") {
  constructor() {
    super("e-mail channels need the operator to configure SMTP_URL")
  }
}

/** A channel cannot go while rules name it. */
export class ChannelInUse extends Refusal("ChannelInUse", 409, "channel_in_use") {
  constructor(channelId: string, ruleIds: ReadonlyArray<string>) {
    super(`channel ${channelId} is named by rule(s) ${ruleIds.join(", ")}: take it out of their action_config.channels first`)
  }
}

/** Alert channels named that are not channels of the org. */
export class UnknownAlertChannels extends Refusal("UnknownAlertChannels", 422, "validation_error") {
  constructor(channelIds: ReadonlyArray<string>) {
    super(`alert_channels: no channel ${channelIds.join(", ")} in this org`)
  }
}
