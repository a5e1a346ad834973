import { describe, expect, it } from "@effect/vitest"
import { Result, Schema } from "effect"
import { LogRecord } from "../../src/domain/records.ts"
import { decodeStored, serializeRecord } from "../../src/log/log-records.ts"

const records: ReadonlyArray<LogRecord> = [
  {
    v: 1,
    kind: "signal",
    org_id: "org_1",
    environment: "live",
    user_id: "user_1",
    ts: "2026-11-22T10:00:00.000Z",
    signal_id: "sig_1",
    type: "user-prompt",
    adapter: "cursor",
    client_session_id: "c",
    metadata: { prompt: "hi", tokens_in: 3 },
    session_timeout_s: 1800,
    team_ids: ["team_1"],
    time_zone: "Europe/Berlin",
    cost: { usd: 0.1, estimated: true, model_known: false }
  },
  {
    v: 1,
    kind: "session-timeout",
    org_id: "org_1",
    environment: "test",
    user_id: "user_1",
    ts: "2026-11-22T10:30:00.000Z",
    session_id: "sess_1",
    last_activity_at: "2026-11-22T10:00:00.000Z"
  },
  {
    v: 1,
    kind: "goal",
    org_id: "org_1",
    environment: "live",
    user_id: "user_1",
    ts: "2026-11-22T10:00:00.000Z",
    command_id: "gcmd_1",
    op: "update",
    goal_id: "goal_1",
    status: "completed"
  }
]

describe("log records on the wire", () => {
  it.each(records)("a $kind record is stored as the JSON of its encoded form, and reads back as itself", (record) => {
    // The append path writes JSON.stringify(record): valid only while encoding changes nothing.
    expect(Schema.encodeSync(LogRecord)(record)).toEqual(record)
    const stored = JSON.parse(serializeRecord(record))
    expect(decodeStored(0, 0, stored)).toEqual(Result.succeed(record))
  })
  it("a record that does not decode says where it is", () => {
    const decoded = decodeStored(3, 42, { v: 1, kind: "signal" })
    expect(Result.isFailure(decoded) && decoded.failure.message).toMatch(/partition 3 offset 42 does not decode as LogRecord/)
  })
})
