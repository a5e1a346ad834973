import { Effect } from "effect"
import { SqlClient } from "effect/sql"

export const m0001_tenancy = Effect.gen(function*() {
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
