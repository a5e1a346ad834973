import { describe, expect, it } from "vitest"
import { CursorOrderMismatch, EventNotFound, SessionNotFound, UnknownCursor } from "../../src/domain/activity.ts"
import { ChannelInUse, ChannelInvalid, ChannelNotFound, SmtpNotConfigured, UnknownAlertChannels } from "../../src/domain/channels.ts"
import { envelopeOf } from "../../src/domain/errors.ts"
import { renderRefusal } from "../../src/http/refusals.ts"
import {
  maxReportChannels,
  periodUnit,
  ReportScheduleInvalid,
  ReportScheduleNotFound,
  scheduleProblems
} from "../../src/domain/report-schedules.ts"
import { RuleNotFound, RuleTeamMissing } from "../../src/domain/rules.ts"
import { SsoInvalid, SsoNotConfigured } from "../../src/domain/sso.ts"
import {
  KeyNotFound,
  NameTaken,
  OrgNotFound,
  ProjectNotFound,
  TeamInUse,
  TeamNotFound,
  UnknownReference,
  UserNotFound
} from "../../src/domain/tenancy.ts"
import { NoWebhookEvents, SecretTooShort, UnknownWebhookEvent, UrlRefused, WebhookNotFound } from "../../src/domain/webhooks.ts"

/**
 * What the management API answers when it refuses a request: for every refusal of the domain, the
 * envelope a client gets (status, code, the message naming what was wrong) and the tag handlers
 * catch it by.
 */
const catalogue = [
  [new SessionNotFound("ses_1"), "SessionNotFound", 404, "not_found", "session ses_1 not found"],
  [new EventNotFound("evt_1"), "EventNotFound", 404, "not_found", "event evt_1 not found"],
  [new UnknownCursor(), "UnknownCursor", 400, "invalid_parameters", "the cursor is not one this endpoint returned"],
  [
    new CursorOrderMismatch("asc"),
    "CursorOrderMismatch",
    400,
    "invalid_parameters",
    "the cursor continues a listing in asc order; pass order=asc or start again without a cursor"
  ],
  [new ChannelNotFound("ch_1"), "ChannelNotFound", 404, "not_found", "channel ch_1 not found"],
  [new ChannelInvalid(["url: bad", "name: blank"]), "ChannelInvalid", 422, "validation_error", "url: bad; name: blank"],
  [new SmtpNotConfigured(), "SmtpNotConfigured", 422, "smtp_not_configured", "e-mail channels need the operator to configure SMTP_URL"],
  [
    new ChannelInUse("ch_1", ["rule_1", "rule_2"]),
    "ChannelInUse",
    409,
    "channel_in_use",
    "channel ch_1 is named by rule(s) rule_1, rule_2: take it out of their action_config.channels first"
  ],
  [new UnknownAlertChannels(["ch_1", "ch_2"]), "UnknownAlertChannels", 422, "validation_error", "alert_channels: no channel ch_1, ch_2 in this org"],
  [new ReportScheduleNotFound("rs_1"), "ReportScheduleNotFound", 404, "not_found", "report schedule rs_1 not found"],
  [new ReportScheduleInvalid(["name: must not be blank", "channels: at most 20"]), "ReportScheduleInvalid", 422, "validation_error",
    "name: must not be blank; channels: at most 20"],
  [new RuleNotFound("rule_1"), "RuleNotFound", 404, "not_found", "rule rule_1 not found"],
  [new RuleTeamMissing("team_1"), "RuleTeamMissing", 422, "validation_error", "scope_id: no team team_1 in this org"],
  [new SsoNotConfigured("org_1"), "SsoNotConfigured", 404, "not_found", "sso settings org_1 not found"],
  [new SsoInvalid(["issuer: not a URL", "allowed_email_domains: at least one domain"]), "SsoInvalid", 422, "validation_error",
    "issuer: not a URL; allowed_email_domains: at least one domain"],
  [new WebhookNotFound("wh_1"), "WebhookNotFound", 404, "not_found", "webhook wh_1 not found"],
  [new NoWebhookEvents(), "NoWebhookEvents", 422, "validation_error", "events must name at least one event"],
  [new SecretTooShort(), "SecretTooShort", 422, "secret_too_short", "secret must have at least 32 characters"],
  [new UrlRefused("private addresses are not allowed"), "UrlRefused", 422, "url_not_allowed", "private addresses are not allowed"],
  [new UrlRefused("private addresses are not allowed", "url"), "UrlRefused", 422, "url_not_allowed", "url: private addresses are not allowed"],
  [new OrgNotFound("org_1"), "OrgNotFound", 404, "not_found", "org org_1 not found"],
  [new OrgNotFound("acme", "name"), "OrgNotFound", 404, "not_found", "no org with id or name acme"],
  [new UserNotFound("user_1"), "UserNotFound", 404, "not_found", "user user_1 not found"],
  [new TeamNotFound("team_1"), "TeamNotFound", 404, "not_found", "team team_1 not found"],
  [new ProjectNotFound("proj_1"), "ProjectNotFound", 404, "not_found", "project proj_1 not found"],
  [new KeyNotFound("key_1"), "KeyNotFound", 404, "not_found", "key key_1 not found"],
  [new NameTaken("team platform"), "NameTaken", 409, "already_exists", "team platform already exists"],
  [new UnknownReference("member_ids", ["user_1", "user_2"]), "UnknownReference", 422, "unknown_reference", "unknown member_ids: user_1, user_2"],
  [
    new TeamInUse("team_1", ["rule_1"]),
    "TeamInUse",
    409,
    "team_in_use",
    "rules are scoped to team team_1: rule_1; delete or re-scope them first"
  ]
] as const

describe("the refusals of the management API", () => {
  it("each answers its status and code and says what was wrong, and is caught by its own tag", () => {
    expect(catalogue.map(([refusal]) => [refusal._tag, refusal.status, refusal.code, refusal.message])).toEqual(
      catalogue.map(([, tag, status, code, message]) => [tag, status, code, message])
    )
  })

  it("reaches the client as the spec's envelope", () => {
    for (const [refusal, , status, code, message] of catalogue) {
      expect(envelopeOf(renderRefusal(refusal), "req_1")).toEqual({ error: message, code, status, request_id: "req_1" })
    }
  })

  it("names every unknown webhook event and the ones that exist", () => {
    const refused = new UnknownWebhookEvent(["budget.blown", "session.begun"])
    expect([refused._tag, refused.status, refused.code]).toEqual(["UnknownWebhookEvent", 422, "unknown_event"])
    expect(refused.message).toMatch(/^unknown event name\(s\): budget\.blown, session\.begun; expected some of [a-z_.]+(, [a-z_.]+)+$/)
    expect(refused.message).toContain("budget.exceeded")
  })
})

describe("a report schedule's own problems", () => {
  it("are a blank name and a channel list that is empty or too long; channels left out are not checked", () => {
    const channels = (n: number) => Array.from({ length: n }, (_, i) => `ch_${i}`)
    expect(scheduleProblems({ name: "Weekly spend", channels: channels(1) })).toEqual([])
    expect(scheduleProblems({ name: "Weekly spend", channels: channels(maxReportChannels) })).toEqual([])
    expect(scheduleProblems({ name: "  ", channels: channels(1) })).toEqual(["name: must not be blank"])
    expect(scheduleProblems({ name: "Weekly spend", channels: [] })).toEqual(["channels: name at least one channel (ch_…)"])
    expect(scheduleProblems({ name: "Weekly spend", channels: channels(maxReportChannels + 1) })).toEqual(["channels: at most 20"])
    expect(scheduleProblems({ name: "", channels: undefined })).toEqual(["name: must not be blank"])
    expect(scheduleProblems({ name: "Monthly", channels: undefined })).toEqual([])
  })

  it("cover a week from Monday or a calendar month", () => {
    expect(periodUnit("weekly")).toBe("week")
    expect(periodUnit("monthly")).toBe("month")
  })
})
