import { Schema } from "effect"
import { driftMethods } from "./drift.ts"
import { Environment } from "./environments.ts"
import { Plan } from "./plans.ts"
import { Metadata, SignalType } from "./signals.ts"

/**
 * Records of the `signals` log (version 1). Every input that changes a user's state is one of
 * these, keyed by `user_id`; state is a deterministic fold of them in offset order, using `ts`
 * (assigned once, at ingestion), never the wall clock. JSON Schemas of these are generated into
 * schemas/ so any Kafka tool can read the topic.
 */
/** The goal-drift detector in force when a record was accepted (drift.ts); absent: lexical-1, the one before. */
const driftMethod = Schema.optional(Schema.Literals(driftMethods)).annotate({
  description: "the goal-drift detector in force when the record was accepted, so a replay judges it the same; absent means lexical-1"
})

const common = {
  v: Schema.Literal(1),
  org_id: Schema.String,
  environment: Environment,
  user_id: Schema.String,
  ts: Schema.String.annotate({ description: "ISO 8601 UTC, millisecond precision; assigned once at ingestion" })
}

export const SignalRecord = Schema.Struct({
  ...common,
  kind: Schema.Literal("signal"),
  signal_id: Schema.String.annotate({ description: "sig_ id assigned at ingestion (derived from the idempotency key where there is one)" }),
  idempotency_key: Schema.optional(Schema.String).annotate({
    description: "the client's key for this signal: a later record of the user with the same key is a retry, not counted again"
  }),
  type: SignalType,
  adapter: Schema.String,
  client_session_id: Schema.String.annotate({ description: "the adapter's own session_id" }),
  metadata: Metadata,
  session_timeout_s: Schema.Int.annotate({ description: "the org's inactivity timeout when the signal was accepted" }),
  team_ids: Schema.optional(Schema.Array(Schema.String)).annotate({
    description: "the teams the user was in when the signal was accepted (team budgets count it there); absent means none"
  }),
  plan: Schema.optional(Plan).annotate({
    description: "the org's plan when the signal was accepted: goal drift and anomalies act only where it has them"
  }),
  rules_version: Schema.optional(Schema.Int).annotate({
    description: "the rules version the accepting node held: the signal is judged by those rules or newer ones; absent means any"
  }),
  time_zone: Schema.optional(Schema.String).annotate({
    description: "the org's time zone for daily and monthly windows when the signal was accepted; absent means UTC"
  }),
  drift_method: driftMethod,
  drift_prompts: Schema.optional(Schema.Int).annotate({
    description: "the org's goal-drift streak when the signal was accepted (0: no goal drift); absent means the " +
      "deployment's `DRIFT_PROMPTS`"
  }),
  cost: Schema.Struct({
    usd: Schema.Number,
    estimated: Schema.Boolean.annotate({ description: "true when computed from the price table, not sent by the adapter" }),
    model_known: Schema.Boolean.annotate({ description: "false when the model is not in the price table" })
  }).annotate({ description: "cost as priced at ingestion, so a replay under another price table gives the same result" })
}).annotate({ identifier: "SignalRecord" })
export type SignalRecord = typeof SignalRecord.Type

/** Appended by a user's timer when a session's inactivity timeout fell due. */
export const SessionTimeoutRecord = Schema.Struct({
  ...common,
  kind: Schema.Literal("session-timeout"),
  session_id: Schema.String,
  last_activity_at: Schema.String.annotate({
    description: "the session's last activity when the timer was set; the tick closes the session only if it is unchanged"
  })
}).annotate({ identifier: "SessionTimeoutRecord" })
export type SessionTimeoutRecord = typeof SessionTimeoutRecord.Type

/**
 * A goal command (POST /goals, PATCH /goals/:id). Goal state belongs to the user's actor, so goal
 * commands go through the log like signals, and replay rebuilds goals with everything else.
 */
export const GoalRecord = Schema.Struct({
  ...common,
  kind: Schema.Literal("goal"),
  command_id: Schema.String.annotate({ description: "gcmd_ id of this command, which its HTTP request waits on" }),
  op: Schema.Literals(["create", "update"]),
  goal_id: Schema.String,
  description: Schema.optional(Schema.String),
  adapter: Schema.optional(Schema.String),
  status: Schema.optional(Schema.Literals(["active", "completed", "abandoned"])),
  drift_method: driftMethod
}).annotate({ identifier: "GoalRecord" })
export type GoalRecord = typeof GoalRecord.Type

export const LogRecord = Schema.Union([SignalRecord, SessionTimeoutRecord, GoalRecord]).annotate({ identifier: "LogRecord" })
export type LogRecord = typeof LogRecord.Type
