import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import * as Migrator from "effect/sql/Migrator"

/**
 * Forward-only, numbered migrations. Each runs once, in id order, inside the migrator's
 * transaction; never edit one that has shipped, add the next number instead.
 */
const m0001_tenancy = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE orgs (
      id text PRIMARY KEY,
      name text NOT NULL,
      plan text NOT NULL CHECK (plan IN ('lite','developer','professional','team','business','enterprise')),
      rate_limit_per_minute integer CHECK (rate_limit_per_minute > 0),
      rate_limit_per_hour integer CHECK (rate_limit_per_hour > 0),
      rate_limit_per_day integer CHECK (rate_limit_per_day > 0),
      session_timeout_s integer NOT NULL DEFAULT 1800 CHECK (session_timeout_s > 0),
      time_zone text NOT NULL DEFAULT 'UTC',
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`
    CREATE TABLE users (
      id text PRIMARY KEY,
      org_id text NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
      email text NOT NULL,
      name text NOT NULL,
      role text NOT NULL CHECK (role IN ('admin','member')),
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (org_id, email)
    )`
  yield* sql`
    CREATE TABLE teams (
      id text PRIMARY KEY,
      org_id text NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
      name text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (org_id, name)
    )`
  yield* sql`
    CREATE TABLE team_members (
      team_id text NOT NULL REFERENCES teams(id) ON DELETE CASCADE,
      user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      PRIMARY KEY (team_id, user_id)
    )`
  yield* sql`CREATE INDEX team_members_user ON team_members (user_id)`
  yield* sql`
    CREATE TABLE projects (
      id text PRIMARY KEY,
      org_id text NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
      name text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      UNIQUE (org_id, name)
    )`
  yield* sql`
    CREATE TABLE api_keys (
      id text PRIMARY KEY,
      org_id text NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
      environment text NOT NULL CHECK (environment IN ('live','test')),
      name text NOT NULL,
      key_hash text NOT NULL UNIQUE,
      key_hint text NOT NULL,
      scopes text[] NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      revoked_at timestamptz
    )`
  yield* sql`CREATE INDEX api_keys_org ON api_keys (org_id, environment, id)`
  yield* sql`
    CREATE TABLE license_keys (
      id text PRIMARY KEY,
      org_id text NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
      user_id text NOT NULL REFERENCES users(id) ON DELETE CASCADE,
      environment text NOT NULL CHECK (environment IN ('live','test')),
      key_hash text NOT NULL UNIQUE,
      key_hint text NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      revoked_at timestamptz
    )`
  yield* sql`CREATE INDEX license_keys_org ON license_keys (org_id, environment, id)`
  // One row per bucket and window; every node counts here, so limits hold across the cluster.
  yield* sql`
    CREATE TABLE rate_limit_counters (
      bucket text NOT NULL,
      window_s integer NOT NULL,
      window_start timestamptz NOT NULL,
      count integer NOT NULL,
      PRIMARY KEY (bucket, window_s, window_start)
    )`
  yield* sql`CREATE INDEX rate_limit_counters_expiry ON rate_limit_counters (window_start)`
})

const m0002_signal_log = Effect.gen(function*() {
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

const m0003_partition_owners = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  // Which node owns each partition now, and where to reach it: a node that receives a signal
  // for a partition it does not own forwards it there (the engine's proxy path).
  yield* sql`
    CREATE TABLE partition_owners (
      log text NOT NULL,
      partition integer NOT NULL,
      node_id text NOT NULL,
      url text NOT NULL,
      claimed_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (log, partition)
    )`
})

const m0004_rules = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE rules (
      id text PRIMARY KEY,
      org_id text NOT NULL REFERENCES orgs(id) ON DELETE CASCADE,
      environment text NOT NULL CHECK (environment IN ('live','test')),
      name text NOT NULL,
      type text NOT NULL CHECK (type IN ('budget','model_filter','user_limit','org_policy')),
      enabled boolean NOT NULL DEFAULT true,
      scope text NOT NULL CHECK (scope IN ('user','team','org','project')),
      scope_id text NOT NULL,
      priority integer NOT NULL,
      condition jsonb NOT NULL,
      action text NOT NULL CHECK (action IN ('block','warn','log','notify')),
      action_config jsonb NOT NULL DEFAULT '{}',
      created_at timestamptz NOT NULL DEFAULT now(),
      updated_at timestamptz NOT NULL DEFAULT now()
    )`
  yield* sql`CREATE INDEX rules_by_org ON rules (org_id, environment, id DESC)`
  yield* sql`CREATE INDEX rules_for_evaluation ON rules (org_id, environment, priority, created_at) WHERE enabled`
})

const m0005_webhooks = Effect.gen(function*() {
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

/**
 * Usage per budget scope (team, org, project) and calendar window, one row per log partition:
 * each partition worker owns its rows and writes their absolute values in its batch transaction,
 * so the total of a scope is the sum over partitions and a replay rewrites exactly its own rows.
 * Goals are the projection of the goal records of the log.
 */
const m0006_scope_usage_and_goals = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE scope_usage (
      org_id text NOT NULL,
      environment text NOT NULL,
      scope text NOT NULL CHECK (scope IN ('team','org','project')),
      scope_id text NOT NULL,
      window_key text NOT NULL,
      partition integer NOT NULL,
      cost_usd double precision NOT NULL,
      tokens_in bigint NOT NULL,
      tokens_out bigint NOT NULL,
      updated_at timestamptz NOT NULL DEFAULT now(),
      PRIMARY KEY (org_id, environment, scope, scope_id, window_key, partition)
    )`
  yield* sql`CREATE INDEX scope_usage_by_partition ON scope_usage (partition)`
  yield* sql`
    CREATE TABLE goals (
      id text PRIMARY KEY,
      org_id text NOT NULL,
      environment text NOT NULL,
      user_id text NOT NULL,
      description text NOT NULL,
      status text NOT NULL CHECK (status IN ('active','completed','abandoned')),
      adapter text,
      created_at timestamptz NOT NULL,
      updated_at timestamptz,
      log_partition integer NOT NULL
    )`
  yield* sql`CREATE INDEX goals_by_user ON goals (user_id, environment, created_at)`
  yield* sql`CREATE INDEX goals_by_partition ON goals (log_partition)`
})

/**
 * The events table loses its unique index on `signal_id`. An event's id is `evt_` plus the suffix
 * of its signal's id (eventIdFor), so the primary key already makes signal ids unique, and no
 * query looks an event up by signal id; the second unique index only cost every insert (and a
 * replay, which keeps the unique indexes) a b-tree insert and ~59 bytes per row (measured).
 */
const m0007_events_without_signal_id_index = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE events DROP CONSTRAINT IF EXISTS events_signal_id_key`
})

/**
 * Room for in-page updates in the tables every commit updates. A session row, an actor's state and
 * a scope's counts are rewritten by nearly every batch, never in an indexed column, so each
 * update can be a heap-only tuple (no new index entries, old versions pruned in the page) — if the
 * page has room for the new version. At the default fill factor (100) pages are filled up, and an
 * update that finds its page full writes the new version elsewhere and into each of the table's
 * indexes, whose dead entries then slow the next conflict lookup. Pages filled after this keep 30% free; existing pages get the room as they are
 * rewritten (VACUUM FULL) or as rows leave them.
 */
const m0008_room_for_updates = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE sessions SET (fillfactor = 70)`
  yield* sql`ALTER TABLE actor_state SET (fillfactor = 70)`
  yield* sql`ALTER TABLE scope_usage SET (fillfactor = 70)`
})

/**
 * An e-mail address names one user of an org whatever its letter case (`A@x.com` is `a@x.com`).
 * An org that already has two users differing only in case keeps them (the index is not built
 * there, and creating a user still checks case-insensitively); everywhere else the database
 * enforces it.
 */
const m0009_user_email_any_case = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql.unsafe(`DO $$ BEGIN
    IF NOT EXISTS (SELECT 1 FROM users GROUP BY org_id, lower(email) HAVING count(*) > 1) THEN
      CREATE UNIQUE INDEX users_org_email_any_case ON users (org_id, lower(email));
    END IF;
  END $$`)
})

/** Partitions a replay began to rebuild and has not finished (src/store/unfinished-replays.ts). */
const m0010_unfinished_replays = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE unfinished_replays (
    partition integer PRIMARY KEY,
    started_at timestamptz NOT NULL DEFAULT now()
  )`
})

/**
 * What the rules decided about a signal sent with an idempotency key, kept with its event: a
 * retry of it is answered the same (the verdict is not in the log, it depends on the rules then).
 */
const m0011_event_verdicts = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE events ADD COLUMN verdict jsonb`
})

/** Users can be deactivated (offboarded): their keys revoked, their activity kept. */
const m0012_user_deactivation = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`ALTER TABLE users ADD COLUMN deactivated_at timestamptz`
})

/**
 * Verdicts are not in the log, so a replay keeps the stored ones of the events it rewrites
 * (`kept_verdicts`, filled in the transaction that forgets the events, emptied once each
 * partition is rebuilt). Found by a scan of the events being forgotten: no index for it, so live
 * writes pay nothing for what only a replay reads (and a replay rewrites every such row anyway).
 */
const m0013_kept_verdicts = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE kept_verdicts (
    event_id text PRIMARY KEY,
    log_partition integer NOT NULL,
    verdict jsonb NOT NULL
  )`
})

/**
 * A batch write is one round trip: its statement and its events' `COPY` in one query string,
 * which PostgreSQL runs as one transaction. The statement calls this when a partition's offset
 * fence did not hold, so that nothing of the write stays (the `COPY` comes after it); the
 * writer then asks again, statement by statement, to learn which partitions were fenced.
 */
const m0014_fence_lost = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE FUNCTION signal_engine_fence_lost(held bigint, wanted integer) RETURNS integer
    LANGUAGE plpgsql AS $$
    BEGIN
      RAISE EXCEPTION 'the offset fence held for % of % partitions', held, wanted USING ERRCODE = 'SEF01';
    END
    $$`
})

/**
 * Nodes cache what a key resolves to (src/http/auth.ts) and drop the cache when a row it is made
 * of changes: every statement that changes one notifies `signal_engine_principals`, delivered to
 * the listening nodes when (and only if) its transaction commits, so no node keeps a revoked key
 * or an old setting longer than the notification takes. A trigger catches every writer (the
 * management API and an operator's SQL alike). Inserts of orgs, users and keys change no
 * principal anyone holds (a new key was never presented before it existed), so only a team
 * membership's insert notifies.
 */
const m0015_principal_changes = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE FUNCTION signal_engine_principals_changed() RETURNS trigger
    LANGUAGE plpgsql AS $$
    BEGIN
      PERFORM pg_notify('signal_engine_principals', TG_TABLE_NAME);
      RETURN NULL;
    END
    $$`
  for (const table of ["orgs", "users", "license_keys", "api_keys"]) {
    yield* sql.unsafe(`CREATE TRIGGER principals_changed AFTER UPDATE OR DELETE OR TRUNCATE ON ${table}
      FOR EACH STATEMENT EXECUTE FUNCTION signal_engine_principals_changed()`)
  }
  yield* sql`CREATE TRIGGER principals_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON team_members
    FOR EACH STATEMENT EXECUTE FUNCTION signal_engine_principals_changed()`
})

/**
 * Rules carry a version: every statement that changes the rules table bumps `rules_version` and
 * notifies `signal_engine_rules` with the new number, in its own transaction (delivered when, and
 * only if, it commits). A node that hears a number above its own reloads the rules; a signal
 * record carries the version its accepting node held, so the node that judges it (maybe another)
 * reloads first when it holds an older one.
 */
const m0016_rules_version = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`CREATE TABLE rules_version (
    one boolean PRIMARY KEY DEFAULT true CHECK (one),
    version bigint NOT NULL
  )`
  yield* sql`INSERT INTO rules_version (version) VALUES (1)`
  yield* sql`CREATE FUNCTION signal_engine_rules_changed() RETURNS trigger
    LANGUAGE plpgsql AS $$
    DECLARE v bigint;
    BEGIN
      UPDATE rules_version SET version = version + 1 RETURNING version INTO v;
      PERFORM pg_notify('signal_engine_rules', v::text);
      RETURN NULL;
    END
    $$`
  yield* sql`CREATE TRIGGER rules_changed AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE ON rules
    FOR EACH STATEMENT EXECUTE FUNCTION signal_engine_rules_changed()`
})

/**
 * Notification channels (chat incoming webhooks, e-mail) and their outbox. A channel's URL is a
 * secret (whoever has it can post to the room), so it is sealed like a webhook secret; only its
 * origin is kept in clear for display. `notifications` rows are the messages to send: ids are
 * hashes of their cause, so a cause enqueued twice is one message, and `firings` counts the
 * causes a coalesced summary covers.
 */
const m0017_notification_channels = Effect.gen(function*() {
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

const all = {
  "0001_tenancy": m0001_tenancy,
  "0002_signal_log": m0002_signal_log,
  "0003_partition_owners": m0003_partition_owners,
  "0004_rules": m0004_rules,
  "0005_webhooks": m0005_webhooks,
  "0006_scope_usage_and_goals": m0006_scope_usage_and_goals,
  "0007_events_without_signal_id_index": m0007_events_without_signal_id_index,
  "0008_room_for_updates": m0008_room_for_updates,
  "0009_user_email_any_case": m0009_user_email_any_case,
  "0010_unfinished_replays": m0010_unfinished_replays,
  "0011_event_verdicts": m0011_event_verdicts,
  "0012_user_deactivation": m0012_user_deactivation,
  "0013_kept_verdicts": m0013_kept_verdicts,
  "0014_fence_lost": m0014_fence_lost,
  "0015_principal_changes": m0015_principal_changes,
  "0016_rules_version": m0016_rules_version,
  "0017_notification_channels": m0017_notification_channels
}

export const migrations = Migrator.fromRecord(all)

/** The newest migration id (from the list, so it cannot lag it); /readyz reports not ready until the database has it. */
export const latestMigrationId = Math.max(...Object.keys(all).map((name) => Number.parseInt(name, 10)))

/**
 * The read indexes of `events` (as migration 0002 created them). A full replay drops them while
 * it writes and builds them again at the end: one sort per index instead of an index insert per
 * row. Start-up builds any that a replay interrupted before its end left missing. A migration
 * that changes one of them must change it here too.
 */
export const eventReadIndexes: ReadonlyArray<{ readonly name: string; readonly on: string }> = [
  { name: "events_by_ts", on: "events (org_id, environment, ts DESC, id DESC)" },
  { name: "events_by_session", on: "events (session_id, ts, id)" },
  { name: "events_by_user", on: "events (org_id, environment, user_id, ts DESC, id DESC)" }
]

/** Builds the missing read indexes, each on its own connection (the database sorts them in parallel). */
export const buildEventReadIndexes = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* Effect.forEach(
    eventReadIndexes,
    ({ name, on }) =>
      sql.withTransaction(Effect.andThen(
        sql`SET LOCAL maintenance_work_mem = '256MB'`,
        sql.unsafe(`CREATE INDEX IF NOT EXISTS ${name} ON ${on}`)
      )),
    { concurrency: "unbounded", discard: true }
  )
})

export const dropEventReadIndexes = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  for (const { name } of eventReadIndexes) yield* sql.unsafe(`DROP INDEX IF EXISTS ${name}`)
})
