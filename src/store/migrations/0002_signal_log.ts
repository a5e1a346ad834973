import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export const m0002_signal_log = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // PgLog: the signals log as a table. Appends to a partition serialise on its head row, so
  // offsets are gapless and commit in offset order: a reader never skips an uncommitted record.
  yield* sql`
    CREATE TABLE signal_log (
      partition integer NOT NULL,
      "offset" bigint NOT NULL,
      key text NOT NULL,
      record jsonb NOT NULL,
      appended_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (partition, "offset")
    )`
  yield* sql`
    CREATE TABLE signal_log_heads (
      partition integer PRIMARY KEY,
      next_offset bigint NOT NULL
    )`
  // Where each partition's projections are up to, per log (a Kafka topic, or the PgLog table);
  // written in the same transaction as the projections of a batch.
  yield* sql`
    CREATE TABLE partition_offsets (
      log text NOT NULL,
      partition integer NOT NULL,
      next_offset bigint NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (log, partition)
    )`
  // Per-user actor state, persisted with each batch and loaded lazily when a user is active again.
  yield* sql`
    CREATE TABLE actor_state (
      user_id text PRIMARY KEY,
      partition integer NOT NULL,
      has_open_sessions boolean NOT NULL,
      state jsonb NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX actor_state_open ON actor_state (partition) WHERE has_open_sessions`
  yield* sql`
    CREATE TABLE sessions (
      id text PRIMARY KEY,
      org_id text NOT NULL,
      environment text NOT NULL,
      user_id text NOT NULL,
      adapter text NOT NULL,
      client_session_id text NOT NULL,
      project_id text,
      started_at timestamptz NOT NULL,
      last_activity_at timestamptz NOT NULL,
      ended_at timestamptz,
      end_reason text CHECK (end_reason IN ('session-end', 'timeout')),
      primary_model text,
      models jsonb NOT NULL,
      tokens_in bigint NOT NULL,
      tokens_out bigint NOT NULL,
      cost_usd double precision NOT NULL,
      signal_count integer NOT NULL,
      error_count integer NOT NULL
    )`
  yield* sql`CREATE INDEX sessions_by_start ON sessions (org_id, environment, started_at DESC, id DESC)`
  yield* sql`CREATE INDEX sessions_by_user ON sessions (org_id, environment, user_id, started_at DESC, id DESC)`
  // One row per accepted signal: the spec's event (evt_ id) and the session's signal (sig_ id).
  yield* sql`
    CREATE TABLE events (
      id text PRIMARY KEY,
      signal_id text NOT NULL UNIQUE,
      org_id text NOT NULL,
      environment text NOT NULL,
      session_id text NOT NULL,
      user_id text NOT NULL,
      project_id text,
      ts timestamptz NOT NULL,
      type text NOT NULL,
      adapter text NOT NULL,
      model text,
      tokens_in bigint NOT NULL,
      tokens_out bigint NOT NULL,
      latency_ms double precision,
      cost_usd double precision NOT NULL,
      cost_estimated boolean NOT NULL,
      model_known boolean NOT NULL,
      error_code text,
      metadata jsonb NOT NULL,
      log_partition integer NOT NULL,
      log_offset bigint NOT NULL
    )`
  yield* sql`CREATE INDEX events_by_ts ON events (org_id, environment, ts DESC, id DESC)`
  yield* sql`CREATE INDEX events_by_session ON events (session_id, ts, id)`
  yield* sql`CREATE INDEX events_by_user ON events (org_id, environment, user_id, ts DESC, id DESC)`
})
