import { describe, expect, it } from "@effect/vitest"
import { judgeAttempt } from "../../src/domain/delivery.ts"
import {
  BadRequest,
  Conflict,
  envelopeOf,
  Forbidden,
  InternalError,
  isApiError,
  MethodNotAllowed,
  NotFound,
  PayloadTooLarge,
  PaymentRequired,
  ServiceUnavailable,
  TooManyRequests,
  Unauthorized,
  Unprocessable,
  UnsupportedMediaType,
  withRequestId
} from "../../src/domain/errors.ts"
import { isRefusal, NotFoundRefusal, Refusal } from "../../src/domain/refusal.ts"
import {
  KeyNotFound,
  LiveKeysNotOnPlan,
  NameTaken,
  OrgNotFound,
  ProjectNotFound,
  TeamInUse as TenancyTeamInUse,
  TeamNotFound as TenancyTeamNotFound,
  UnknownReference,
  UserDeactivated,
  UserNotFound
} from "../../src/domain/tenancy.ts"

/** What a client is told when a request fails (spec §7), and how a delivery attempt is judged (spec §6.4). */
describe("the error envelope", () => {
  it("each error has its status and its default code, as the spec's table and this service's additions name them", () => {
    const made = [
      BadRequest.of("m"),
      Unauthorized.of("m"),
      PaymentRequired.of("m"),
      Forbidden.of("m"),
      NotFound.of("m"),
      MethodNotAllowed.of("m"),
      Conflict.of("m"),
      PayloadTooLarge.of("m"),
      UnsupportedMediaType.of("m"),
      Unprocessable.of("m"),
      TooManyRequests.of("m"),
      InternalError.of(),
      ServiceUnavailable.of("m")
    ]
    expect(made.map((e) => [e._tag, e.status, e.code])).toEqual([
      ["BadRequest", 400, "invalid_parameters"],
      ["Unauthorized", 401, "unauthorized"],
      ["PaymentRequired", 402, "payment_required"],
      ["Forbidden", 403, "forbidden"],
      ["NotFound", 404, "not_found"],
      ["MethodNotAllowed", 405, "method_not_allowed"],
      ["Conflict", 409, "conflict"],
      ["PayloadTooLarge", 413, "payload_too_large"],
      ["UnsupportedMediaType", 415, "unsupported_media_type"],
      ["Unprocessable", 422, "validation_error"],
      ["TooManyRequests", 429, "rate_limited"],
      ["InternalError", 500, "internal_error"],
      ["ServiceUnavailable", 503, "unavailable"]
    ])
    expect(made.every(isApiError)).toBe(true)
    expect(InternalError.of().error).toBe("internal server error")
    expect(BadRequest.of("unknown signal type", "invalid_signal_type")).toMatchObject({
      error: "unknown signal type",
      code: "invalid_signal_type",
      status: 400
    })
    expect(isApiError(new Error("x"))).toBe(false)
  })

  it("gets its request id in one place, and renders as {error, code, status, request_id} only", () => {
    const e = withRequestId(PaymentRequired.of("budget exceeded", "budget_exceeded"), "req_1")
    expect(e).toBeInstanceOf(PaymentRequired)
    expect(envelopeOf(e, "req_1")).toStrictEqual({ error: "budget exceeded", code: "budget_exceeded", status: 402, request_id: "req_1" })
    expect(e.request_id).toBe("req_1")
  })

  it("of the signal endpoints' 503 carries the blocks judged at acceptance, in order", () => {
    const verdicts = [{ ok: false as const, action: "block" as const, rule_id: "rule_1", message: "no o3" }, null]
    const e = withRequestId(ServiceUnavailable.of("the log is down", "log_unavailable", verdicts), "req_2")
    expect(envelopeOf(e, "req_2")).toStrictEqual({ error: "the log is down", code: "log_unavailable", status: 503, request_id: "req_2", verdicts })
    expect(envelopeOf(ServiceUnavailable.of("down"), "req_3")).toStrictEqual({ error: "down", code: "unavailable", status: 503, request_id: "req_3" })
  })
})

describe("refusals raised by domain and store code", () => {
  class TeamInUse extends Refusal("TeamInUse", 409, "team_in_use") {}
  class TeamNotFound extends NotFoundRefusal("TeamNotFound", "team") {}

  it("carry their message, status and code, and are told apart from other errors", () => {
    const inUse = new TeamInUse("team team_a has members")
    expect([inUse._tag, inUse.message, inUse.status, inUse.code]).toEqual(["TeamInUse", "team team_a has members", 409, "team_in_use"])
    const missing = new TeamNotFound("team_x")
    expect([missing._tag, missing.message, missing.status, missing.code]).toEqual(["TeamNotFound", "team team_x not found", 404, "not_found"])
    expect([inUse, missing].every(isRefusal)).toBe(true)
    expect(
      [new Error("x"), { _tag: "X", status: 404, code: "c" }, Object.assign(new Error("x"), { _tag: "X", status: "404", code: "c" }), null].some(isRefusal)
    )
      .toBe(false)
  })
})

describe("the tenancy refusals", () => {
  it("say what was refused, with the status and code the management API answers", () => {
    const table = [
      new OrgNotFound("org_1"),
      new OrgNotFound("acme", "name"),
      new UserNotFound("usr_1"),
      new TenancyTeamNotFound("team_1"),
      new ProjectNotFound("proj_1"),
      new KeyNotFound("key_1"),
      new NameTaken("a user with e-mail ada@example.com"),
      new UnknownReference("team_ids", ["team_x", "team_y"]),
      UserDeactivated.asMembers(["usr_1", "usr_2"]),
      UserDeactivated.inTeams("usr_1"),
      UserDeactivated.forKey("usr_1"),
      new TenancyTeamInUse("team_1", ["rule_1", "rule_2"]),
      new LiveKeysNotOnPlan("developer")
    ]
    expect(table.map((e) => [e.status, e.code, e.message])).toEqual([
      [404, "not_found", "org org_1 not found"],
      [404, "not_found", "no org with id or name acme"],
      [404, "not_found", "user usr_1 not found"],
      [404, "not_found", "team team_1 not found"],
      [404, "not_found", "project proj_1 not found"],
      [404, "not_found", "key key_1 not found"],
      [409, "already_exists", "a user with e-mail ada@example.com already exists"],
      [422, "unknown_reference", "unknown team_ids: team_x, team_y"],
      [409, "user_deactivated", "deactivated user(s) cannot be team members: usr_1, usr_2"],
      [409, "user_deactivated", "user usr_1 is deactivated and can be in no team; reactivate it first"],
      [409, "user_deactivated", "user usr_1 is deactivated; reactivate it before giving it a key"],
      [409, "team_in_use", "rules are scoped to team team_1: rule_1, rule_2; delete or re-scope them first"],
      [422, "plan_requires_test_keys", "live keys require the team plan or higher; this org is on developer"]
    ])
    expect(table.every(isRefusal)).toBe(true)
  })
})

describe("a delivery attempt", () => {
  const failed = { delivered: false, status_code: 500, latency_ms: 10, error: "HTTP 500" }
  it("delivered is done; failed is retried after 30 s, 5 min, 30 min, 2 h (scaled), and the fifth gives up", () => {
    expect(judgeAttempt(1, { ...failed, delivered: true, status_code: 200, error: null }, 1)).toEqual({
      outcome: "delivered",
      delayMs: undefined,
      status: "delivered"
    })
    expect([1, 2, 3, 4].map((n) => judgeAttempt(n, failed, 1))).toEqual(
      [30_000, 300_000, 1_800_000, 7_200_000].map((delayMs) => ({ outcome: "retry", delayMs, status: "pending" }))
    )
    expect(judgeAttempt(2, failed, 0.001)).toEqual({ outcome: "retry", delayMs: 300, status: "pending" })
    expect(judgeAttempt(5, failed, 1)).toEqual({ outcome: "gave-up", delayMs: undefined, status: "failed" })
  })
})
