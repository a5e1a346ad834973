import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * Notification channels (chat incoming webhooks, e-mail) and their outbox. A channel's URL is a
 * secret (whoever has it can post to the room), so it is sealed like a webhook secret; only its
 * origin is kept in clear for display. `notifications` rows are the messages to send: ids are
 * hashes of their cause, so a cause enqueued twice is one message, and `firings` counts the
 * causes a coalesced summary covers.
 */
export const m0017_notification_channels = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE channels (
      id text PRIMARY KEY,
      org_id text NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
      environment text NOT NULL CHECK (environment IN ('live','test')),
      name text NOT NULL,
      kind text NOT NULL CHECK (kind IN ('slack','teams','discord','email')),
      url_ciphertext text,
      url_origin text,
      addresses text[] NOT NULL DEFAULT '{}',
      coalesce_s integer NOT NULL DEFAULT 300 CHECK (coalesce_s > 0),
      enabled boolean NOT NULL DEFAULT true,
      failing boolean NOT NULL DEFAULT false,
      failing_since timestamptz,
      leased_until timestamptz NOT NULL DEFAULT '-infinity',
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz
    )`
  yield* sql`CREATE INDEX channels_by_org ON channels (org_id, environment, id DESC)`
  // The channels an org's admin alerts go to (either environment's; an alert goes to those of its own).
  yield* sql`
    CREATE TABLE org_alert_channels (
      org_id text NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
      channel_id text NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
      PRIMARY KEY (org_id, channel_id)
    )`
  yield* sql`
    CREATE TABLE notifications (
      id text PRIMARY KEY,
      seq bigserial NOT NULL UNIQUE,
      channel_id text NOT NULL REFERENCES channels(id) ON DELETE CASCADE,
      org_id text NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
      environment text NOT NULL CHECK (environment IN ('live','test')),
      type text NOT NULL,
      facts jsonb NOT NULL,
      firings integer NOT NULL DEFAULT 1,
      summary boolean NOT NULL DEFAULT false,
      window_end timestamptz,
      status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending','delivered','failed')),
      attempts integer NOT NULL DEFAULT 0,
      next_attempt_at timestamptz NOT NULL,
      last_attempt_at timestamptz,
      last_error text,
      delivered_at timestamptz,
      created_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX notifications_due ON notifications (channel_id, next_attempt_at) WHERE status = 'pending'`
})
