import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export const m0005_webhooks = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // Service-wide settings (the generated webhook secret key when WEBHOOK_SECRET_KEY is unset).
  yield* sql`
    CREATE TABLE settings (
      name text PRIMARY KEY,
      value text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`
    CREATE TABLE webhooks (
      id text PRIMARY KEY,
      org_id text NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
      environment text NOT NULL CHECK (environment IN ('live','test')),
      url text NOT NULL,
      events text[] NOT NULL,
      secret_ciphertext text NOT NULL,
      enabled boolean NOT NULL DEFAULT true,
      failing boolean NOT NULL DEFAULT false,
      failing_since timestamptz,
      leased_until timestamptz NOT NULL DEFAULT '-infinity',
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX webhooks_by_org ON webhooks (org_id, environment, id DESC)`
  // The outbox: one row per event, written in the transaction of the change that caused it.
  yield* sql`
    CREATE TABLE webhook_events (
      id text PRIMARY KEY,
      seq bigserial NOT NULL UNIQUE,
      org_id text NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
      environment text NOT NULL CHECK (environment IN ('live','test')),
      type text NOT NULL,
      -- json, not jsonb: the text is kept as written, so every attempt sends the same bytes.
      payload json NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`
    CREATE TABLE webhook_deliveries (
      webhook_id text NOT NULL REFERENCES webhooks(id) ON DELETE CASCADE,
      event_id text NOT NULL REFERENCES webhook_events(id) ON DELETE CASCADE,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending','delivered','failed')),
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL,
      last_attempt_at timestamptz,
      last_status integer,
      last_error text,
      delivered_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (webhook_id, event_id)
    )`
  yield* sql`CREATE INDEX webhook_deliveries_due ON webhook_deliveries (webhook_id, next_attempt_at) WHERE status = 'pending'`
  // One row per attempt: what was tried, when, what came back, and when the next try was set for.
  yield* sql`
    CREATE TABLE webhook_attempts (
      webhook_id text NOT NULL,
      event_id text NOT NULL,
      attempt integer NOT NULL,
      attempted_at timestamptz NOT NULL,
      finished_at timestamptz NOT NULL,
      status_code integer,
      error text,
      next_attempt_at timestamptz,
      PRIMARY KEY (webhook_id, event_id, attempt),
      FOREIGN KEY (webhook_id, event_id) REFERENCES webhook_deliveries (webhook_id, event_id) ON DELETE CASCADE
    )`
  yield* sql`
    CREATE TABLE alerts (
      id text PRIMARY KEY,
      org_id text NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
      environment text NOT NULL CHECK (environment IN ('live','test')),
      type text NOT NULL,
      message text NOT NULL,
      data jsonb NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX alerts_by_org ON alerts (org_id, environment, id DESC)`
})
