import { Effect } from "effect"
import { SqlClient } from "effect/sql"

/**
 * The audit log (src/store/audit-repo.ts): one row per change made through the management API,
 * written in the change's transaction. Append-only in the database itself: a trigger refuses
 * every UPDATE, TRUNCATE and DELETE, except the retention purge's deletes (`audit_log_purge`, which
 * sets a transaction-local flag) of rows older than a day. No foreign key to `orgs`: nothing may
 * take an org's entries with it.
 */
export const m0019_audit_log = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* sql`
    CREATE TABLE audit_log (
      id text PRIMARY KEY,
      org_id text NOT NULL,
      environment text NOT NULL CHECK (environment IN ('live','test')),
      ts timestamptz NOT NULL DEFAULT now(),
      actor_type text NOT NULL,
      actor_id text NOT NULL,
      action text NOT NULL,
      resource_type text NOT NULL,
      resource_id text,
      before jsonb,
      after jsonb,
      ip text,
      user_agent text,
      request_id text
    )`
  yield* sql`CREATE INDEX audit_log_by_org ON audit_log (org_id, ts DESC, id DESC)`
  yield* sql`CREATE INDEX audit_log_by_ts ON audit_log (ts)`
  yield* sql.unsafe(`
    CREATE FUNCTION audit_log_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
    BEGIN
      IF TG_OP = 'DELETE' AND current_setting('signal_engine.audit_purge', true) = 'on'
        AND OLD.ts < now() - interval '1 day' THEN
        RETURN OLD;
      END IF;
      RAISE EXCEPTION 'audit_log is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
    END $$`)
  yield* sql`
    CREATE TRIGGER audit_log_append_only BEFORE UPDATE OR DELETE ON audit_log
    FOR EACH ROW EXECUTE FUNCTION audit_log_refuse_change()`
  yield* sql`
    CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON audit_log
    FOR EACH STATEMENT EXECUTE FUNCTION audit_log_refuse_change()`
  yield* sql.unsafe(`
    CREATE FUNCTION audit_log_purge(cutoff timestamptz) RETURNS bigint LANGUAGE plpgsql AS $$
    DECLARE purged bigint;
    BEGIN
      PERFORM set_config('signal_engine.audit_purge', 'on', true);
      DELETE FROM audit_log WHERE ts < cutoff;
      GET DIAGNOSTICS purged = ROW_COUNT;
      PERFORM set_config('signal_engine.audit_purge', 'off', true);
      RETURN purged;
    END $$`)
})
