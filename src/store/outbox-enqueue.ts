import type { BatchWrite } from "./batch-write.ts"

/**
 * How a batch's notices enter the outbox, as CTEs of the batch statement (batch-write.ts): the
 * events of the partitions whose fence held, with deterministic ids (`ON CONFLICT DO NOTHING`, so
 * a cause enqueued twice, by two partitions in one statement too, is one event); then, for the
 * events inserted for the first time (`new_events`), a delivery per webhook and a message per
 * channel the domain addressed them to (src/domain/recipients.ts). So an outbox row exists iff
 * its cause committed, a redelivered batch (its events exist already) enqueues nothing twice,
 * and a replay (which enqueues no events) sends nothing. A target deleted or disabled since the
 * node read its targets gets nothing; the batch still commits.
 */
export const outboxCtes = (
  batches: ReadonlyArray<BatchWrite>,
  json: (rows: unknown) => string,
  held: (column: string) => string
): ReadonlyArray<string> => {
  // `n` numbers the events in the order their causes happened, which is the order their
  // `seq` (and so their delivery) must follow: the planner may read the set in any order.
  let n = 0
  const events = batches.flatMap((b) => b.notices.map((e) => ({ ...e, payload: JSON.stringify(e.payload), partition: b.partition, n: n++ })))
  if (events.length === 0) return []
  const ctes = [`new_events AS (
    INSERT INTO webhook_events (id, org_id, environment, type, payload)
    SELECT id, org_id, environment, type, payload::json
    FROM json_to_recordset(${json(events)}) AS r(
      id text, org_id text, environment text, type text, payload text, partition integer, n integer)
    WHERE ${held("r.partition")}
    ORDER BY r.n
    ON CONFLICT (id) DO NOTHING
    RETURNING id, org_id, environment, type, payload)`]
  const webhooks = batches.flatMap((b) => b.recipients.webhooks)
  if (webhooks.length > 0) {
    ctes.push(`deliveries_written AS (
      INSERT INTO webhook_deliveries (webhook_id, event_id, next_attempt_at)
      SELECT w.id, e.id, now()
      FROM (SELECT DISTINCT * FROM json_to_recordset(${json(webhooks)}) AS x(event_id text, webhook_id text)) r
      JOIN new_events e ON e.id = r.event_id
      JOIN webhooks w ON w.id = r.webhook_id AND w.enabled)`)
  }
  const channels = batches.flatMap((b) => b.recipients.channels)
  if (channels.length > 0) ctes.push(...notificationCtes(json(channels)))
  return ctes
}

const hashId = (text: string) => `'ntf_' || left(encode(sha256(convert_to(${text}, 'UTF8')), 'hex'), 32)`

/**
 * Coalescing: firings are grouped per channel and topic (recipients.ts's `topicOf`) and per
 * window of the channel's `coalesce_s`, aligned on the epoch and taken from the event's time (so
 * it does not depend on when the batch runs). The first firing of a window is a message sent now;
 * the later ones of that window add to one summary message, due when the window ends, whose
 * `firings` says how many it covers. At most two messages per topic, channel and window, however
 * often a rule fires, plus one per batch that folds firings of a window after its summary was due
 * (late: a backlog).
 */
const notificationCtes = (recipients: string): ReadonlyArray<string> => [
  `notify_targets AS (
    SELECT e.id AS event_id, e.org_id, e.environment, e.type, e.payload::jsonb AS facts, c.id AS channel_id, c.coalesce_s, r.topic
    FROM (SELECT DISTINCT * FROM json_to_recordset(${recipients}) AS x(event_id text, channel_id text, topic text)) r
    JOIN new_events e ON e.id = r.event_id
    JOIN channels c ON c.id = r.channel_id AND c.enabled)`,
  `notify_groups AS (
    SELECT channel_id, org_id, environment, type, topic, coalesce_s,
      floor(extract(epoch FROM (facts->>'ts')::timestamptz) / coalesce_s)::bigint AS bucket,
      count(*)::int AS n,
      (array_agg(facts ORDER BY facts->>'ts', event_id))[1] AS first_facts,
      (array_agg(facts ORDER BY facts->>'ts' DESC, event_id DESC))[1] AS last_facts,
      max(event_id) AS last_event_id
    FROM notify_targets
    GROUP BY channel_id, org_id, environment, type, topic, coalesce_s, bucket)`,
  `notify_keyed AS (
    SELECT g.*, ${hashId("channel_id || ':' || topic || ':' || bucket")} AS first_id,
      ${hashId("channel_id || ':' || topic || ':' || bucket || ':more'")} AS more_id,
      to_timestamp((bucket + 1) * coalesce_s) AS window_end
    FROM notify_groups g)`,
  `notify_first AS (
    INSERT INTO notifications (id, channel_id, org_id, environment, type, facts, firings, summary, next_attempt_at)
    SELECT first_id, channel_id, org_id, environment, type, first_facts, 1, false, now() FROM notify_keyed
    ON CONFLICT (id) DO NOTHING
    RETURNING id)`,
  // A summary is added to only until it is due (its window's end): one being sent, or sent, is
  // not changed under the dispatcher.
  `notify_more AS (
    INSERT INTO notifications (id, channel_id, org_id, environment, type, facts, firings, summary, window_end, next_attempt_at)
    SELECT more_id, channel_id, org_id, environment, type, last_facts,
      n - (first_id IN (SELECT id FROM notify_first))::int, true, window_end, greatest(now(), window_end)
    FROM notify_keyed
    WHERE n - (first_id IN (SELECT id FROM notify_first))::int > 0
    ON CONFLICT (id) DO UPDATE SET firings = notifications.firings + excluded.firings, facts = excluded.facts
      WHERE notifications.status = 'pending' AND notifications.attempts = 0 AND notifications.next_attempt_at > now()
    RETURNING id)`,
  // Firings folded after their window's summary was due (a backlog, a slow batch) get a late
  // summary of their own, sent now: every firing is counted in some message. Its id names the
  // batch's last event of the group, so a batch folded again adds nothing (its events exist).
  `notify_late AS (
    INSERT INTO notifications (id, channel_id, org_id, environment, type, facts, firings, summary, window_end, next_attempt_at)
    SELECT ${hashId("channel_id || ':' || topic || ':' || bucket || ':late:' || last_event_id")}, channel_id, org_id,
      environment, type, last_facts, n - (first_id IN (SELECT id FROM notify_first))::int, true, window_end, now()
    FROM notify_keyed
    WHERE n - (first_id IN (SELECT id FROM notify_first))::int > 0 AND more_id NOT IN (SELECT id FROM notify_more)
    ON CONFLICT (id) DO NOTHING)`
]
