import type { ChannelKind } from "../domain/channels.ts"
import type { Rendered } from "../domain/notification-text.ts"

/**
 * The body each chat service's incoming webhook takes, built from a rendered message. Names in
 * the text (rule names, users) come from tenants, so each format neutralises what its service
 * would interpret: Slack's `<…>` links and mentions, Discord's @everyone.
 */

/** Slack's mrkdwn control characters (https://api.slack.com/reference/surfaces/formatting#escaping). */
const slackEscape = (s: string) => s.replaceAll("&", "&amp;").replaceAll("<", "&lt;").replaceAll(">", "&gt;")

/** Slack (and Mattermost, Rocket.Chat…): `text` is the fallback every client shows; `blocks` the layout. */
export const slackBody = (m: Rendered) => ({
  text: slackEscape([m.title, ...m.lines, ...(m.link ? [m.link] : [])].join("\n")),
  blocks: [
    { type: "section", text: { type: "mrkdwn", text: `*${slackEscape(m.title)}*\n${slackEscape(m.lines.join("\n"))}` } },
    ...(m.link
      ? [{ type: "context", elements: [{ type: "mrkdwn", text: `<${m.link}|Open in the dashboard>` }] }]
      : [])
  ]
})

/**
 * Microsoft Teams: an Adaptive Card in a message, the format both the Workflows webhooks and the
 * older Office 365 connectors accept.
 */
export const teamsBody = (m: Rendered) => ({
  type: "message",
  attachments: [{
    contentType: "application/vnd.microsoft.card.adaptive",
    contentUrl: null,
    content: {
      $schema: "http://adaptivecards.io/schemas/adaptive-card.json",
      type: "AdaptiveCard",
      version: "1.4",
      body: [
        { type: "TextBlock", text: m.title, weight: "Bolder", size: "Medium", wrap: true },
        ...m.lines.map((line) => ({ type: "TextBlock", text: line, wrap: true, spacing: "Small" }))
      ],
      ...(m.link ? { actions: [{ type: "Action.OpenUrl", title: "Open in the dashboard", url: m.link }] } : {})
    }
  }]
})

/** Discord: at most 2,000 characters of `content`; no mention in it pings anyone. */
export const discordBody = (m: Rendered) => {
  const content = [`**${m.title}**`, ...m.lines, ...(m.link ? [m.link] : [])].join("\n")
  return { content: content.length > 2000 ? `${content.slice(0, 1999)}…` : content, allowed_mentions: { parse: [] } }
}

export const chatBody = (kind: Exclude<ChannelKind, "email">, m: Rendered): unknown =>
  kind === "slack" ? slackBody(m) : kind === "teams" ? teamsBody(m) : discordBody(m)

/** An e-mail: the title as subject (on one line), the lines and the link as plain text. */
export const emailMessage = (m: Rendered) => ({
  subject: m.title.replace(/[\r\n]+/g, " ").slice(0, 200),
  text: [...m.lines, ...(m.link ? ["", `Open in the dashboard: ${m.link}`] : []), "", "— signal-engine"].join("\n")
})
