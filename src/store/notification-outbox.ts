/**
 * How events become notifications, in the batch statement that writes them (projections.ts):
 * CTEs over `new_events`, the webhook events this statement inserted for the first time. So a
 * notification exists iff its cause committed, a redelivered batch (its events exist already)
 * enqueues nothing twice, and a replay (which enqueues no events) sends nothing.
 *
 * Routing: a `notify` rule's firing goes to the channels its action_config names; budget
 * warnings and exceeded, and anomalies, go to the org's alert channels of the event's
 * environment. Coalescing: firings are grouped per channel and topic (rule and user, anomaly
 * type and user; a budget event is its own topic, once per rule, scope and window already) and
 * per window of the channel's `coalesce_s`, aligned on the epoch and taken from the event's
 * time (so it does not depend on when the batch runs). The first firing of a window is a
 * message sent now; the later ones of that window add to one summary message, due when the
 * window ends, whose `firings` says how many it covers. At most two messages per topic, channel
 * and window, however often a rule fires, plus one per batch that folds firings of a window
 * after its summary was due (late: a backlog).
 */
const hashId = (text: string) => `'ntf_' || left(encode(sha256(convert_to(${text}, 'UTF8')), 'hex'), 32)`

export const notificationCtes: ReadonlyArray<string> = [
  `notify_targets AS (
    SELECT e.id AS event_id, e.org_id, e.environment, e.type, e.payload::jsonb AS facts, c.id AS channel_id, c.coalesce_s,
      'rule:' || (e.payload->'data'->>'rule_id') || ':' || (e.payload->'data'->>'user_id') AS topic
    FROM new_events e
    JOIN rules r ON r.id = e.payload->'data'->>'rule_id'
    JOIN channels c ON c.org_id = e.org_id AND c.environment = e.environment AND c.enabled
      AND jsonb_typeof(r.action_config->'channels') = 'array' AND r.action_config->'channels' ? c.id
    WHERE e.type = 'rule.triggered' AND e.payload->'data'->>'action' = 'notify'
    UNION ALL
    SELECT e.id, e.org_id, e.environment, e.type, e.payload::jsonb, c.id, c.coalesce_s,
      CASE WHEN e.type = 'anomaly.detected'
        THEN 'anomaly:' || (e.payload->'data'->>'anomaly_type') || ':' || (e.payload->'data'->>'user_id')
        ELSE e.id END
    FROM new_events e
    JOIN org_alert_channels a ON a.org_id = e.org_id
    JOIN channels c ON c.id = a.channel_id AND c.environment = e.environment AND c.enabled
    WHERE e.type IN ('budget.warning', 'budget.exceeded', 'anomaly.detected'))`,
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
