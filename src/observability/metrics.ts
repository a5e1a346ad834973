import { Context } from "effect"
import { Counter, Gauge, Histogram, Registry } from "prom-client"

/** Seconds buckets for what a request waits on (a verdict, an append): 1 ms to 10 s. */
const latencyBuckets = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

/** Seconds buckets for the stages of a verdict, some of which take microseconds: 50 µs to 5 s. */
const stageBuckets = [0.00005, 0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5]

/**
 * Metric children (a metric at given labels) by a string key, made once each: prom-client checks
 * and hashes a label object on every call, which counts on paths taken per signal or per request.
 */
export const childrenByKey = <C>() => {
  const children = new Map<string, C>()
  return (key: string, make: () => C): C => {
    let child = children.get(key)
    if (child === undefined) children.set(key, child = make())
    return child
  }
}

/** The service's metrics, as the code updates them (see makeMetrics for their names and help). */
export interface EngineMetrics {
  readonly registry: Registry
  readonly signalsAccepted: Counter<"type" | "action">
  readonly verdictLatency: Histogram<never>
  readonly verdictStages: VerdictStages
  readonly pendingVerdicts: Gauge<never>
  readonly appendDuration: Histogram<"log">
  readonly appendErrors: Counter<"log">
  readonly consumerLag: Gauge<"partition">
  readonly commitDuration: Histogram<"partition">
  readonly commitLag: Histogram<never>
  readonly uncommittedRecords: Gauge<"partition">
  readonly partitionsOwned: Gauge<never>
  readonly partitionsFailing: Gauge<never>
  readonly actors: Gauge<"partition">
  readonly sessionTimers: Gauge<"partition">
  readonly webhookDeliveries: Counter<"outcome">
  readonly webhookBacklog: Gauge<never>
  readonly webhooksFailing: Gauge<never>
  readonly rateLimited: Counter<"api">
  readonly dbPoolMax: Gauge<never>
  readonly dbConnections: Gauge<"state">
  readonly httpRequests: Counter<"method" | "route" | "status">
  readonly httpDuration: Histogram<"method" | "route">
}

/**
 * A verdict's path through the node, stage by stage, each observed once per record: `admit` (from
 * the server reading the request to its append: the handler's start, authentication, the body and
 * its decoding, the rules judged at acceptance), `append` (the
 * request's append until the log confirmed it), `fetch` (Kafka, a record another node or an
 * earlier run appended: from its produce to its fetch here), `queue` (from the node holding the
 * record, appended or fetched, until its batch reached the partition's worker: the partition's
 * turn), `fold` (the batch in the worker until its verdicts were completed) and `answer` (from
 * then, or from the append's confirmation where the verdict came first, until the waiting
 * request went on). Stages can overlap: a node folds its own append as the log confirms it.
 */
export interface VerdictStages {
  readonly admit: Histogram.Internal<"stage">
  readonly append: Histogram.Internal<"stage">
  readonly fetch: Histogram.Internal<"stage">
  readonly queue: Histogram.Internal<"stage">
  readonly fold: Histogram.Internal<"stage">
  readonly answer: Histogram.Internal<"stage">
}

/**
 * The service's Prometheus metrics (prom-client), one registry per running service. Counters and
 * histograms are updated where their event happens (a label lookup and an add, no allocation of
 * ours); gauges of state (lag, actors, backlog) are set when /metrics is scraped
 * (src/observability/metrics-server.ts). Names are prefixed `signal_engine_`.
 */
export const makeMetrics = (): EngineMetrics => {
  const registry = new Registry()
  const registers = [registry]
  const counter = <L extends string = never>(name: string, help: string, labelNames: ReadonlyArray<L> = []) =>
    new Counter<L>({ name, help, labelNames, registers })
  const gauge = <L extends string = never>(name: string, help: string, labelNames: ReadonlyArray<L> = []) => new Gauge<L>({ name, help, labelNames, registers })
  const histogram = <L extends string = never>(name: string, help: string, labelNames: ReadonlyArray<L> = []) =>
    new Histogram<L>({ name, help, labelNames, buckets: latencyBuckets, registers })
  const stages = new Histogram<"stage">({
    name: "signal_engine_verdict_stage_seconds",
    help:
      "A verdict's path by stage, once per record: admit (from the request read to its append), append, fetch (Kafka, records fetched rather than appended here), queue (until the partition's worker takes its batch), fold (until its verdicts are completed), answer (until the request goes on)",
    labelNames: ["stage"],
    buckets: stageBuckets,
    registers
  })
  return {
    registry,
    verdictStages: {
      admit: stages.labels({ stage: "admit" }),
      append: stages.labels({ stage: "append" }),
      fetch: stages.labels({ stage: "fetch" }),
      queue: stages.labels({ stage: "queue" }),
      fold: stages.labels({ stage: "fold" }),
      answer: stages.labels({ stage: "answer" })
    },
    signalsAccepted: counter(
      "signal_engine_signals_accepted_total",
      "Signals accepted into the log, by signal type and the action answered (allow, block, warn, log, notify, redact, pending)",
      ["type", "action"]
    ),
    verdictLatency: histogram(
      "signal_engine_verdict_latency_seconds",
      "From a signal's append to its answer (its verdict, or pending at INGEST_WAIT)"
    ),
    pendingVerdicts: gauge("signal_engine_pending_verdicts", "Requests waiting now for the verdict of a signal in the log"),
    appendDuration: histogram(
      "signal_engine_log_append_duration_seconds",
      "Appends to the signal log (one append carries a request's records), by log",
      ["log"]
    ),
    appendErrors: counter("signal_engine_log_append_errors_total", "Appends the signal log did not confirm, by log", ["log"]),
    consumerLag: gauge(
      "signal_engine_consumer_lag_records",
      "Records of an owned partition not yet folded: the log's end offset minus the partition's next offset",
      ["partition"]
    ),
    commitDuration: histogram(
      "signal_engine_partition_commit_duration_seconds",
      "A batch's commit of projections, actor states and offset, by partition",
      ["partition"]
    ),
    commitLag: histogram(
      "signal_engine_commit_lag_seconds",
      "From a record's verdict (its fold) to its projections' commit, for the oldest record of each commit"
    ),
    uncommittedRecords: gauge(
      "signal_engine_uncommitted_records",
      "Records folded and answered whose projections are not committed yet, by partition (bounded by COMMIT_LAG_MAX_RECORDS)",
      ["partition"]
    ),
    partitionsOwned: gauge("signal_engine_partitions_owned", "Partitions of the log this node owns"),
    partitionsFailing: gauge(
      "signal_engine_partitions_failing",
      "Owned partitions whose batch keeps failing to commit (retried until it does)"
    ),
    actors: gauge("signal_engine_actors_in_memory", "Users whose actor is in memory, by partition", ["partition"]),
    sessionTimers: gauge("signal_engine_session_timers", "Session inactivity timers running, by partition", ["partition"]),
    webhookDeliveries: counter(
      "signal_engine_webhook_deliveries_total",
      "Webhook delivery attempts by this node, by outcome (delivered, retry, gave-up, stale)",
      ["outcome"]
    ),
    webhookBacklog: gauge(
      "signal_engine_webhook_backlog",
      "Webhook deliveries not yet delivered nor given up (all nodes: read from the database)"
    ),
    webhooksFailing: gauge(
      "signal_engine_webhooks_failing",
      "Webhooks paused as failing until re-enabled (all nodes: read from the database)"
    ),
    rateLimited: counter(
      "signal_engine_rate_limited_total",
      "Requests refused with 429 for a rate limit, by API (management, engine)",
      ["api"]
    ),
    dbPoolMax: gauge("signal_engine_db_pool_max_connections", "The most connections this node's pool opens to PostgreSQL"),
    dbConnections: gauge(
      "signal_engine_db_connections",
      "Connections of signal-engine nodes to the database, by state (active, idle, ...), from pg_stat_activity",
      ["state"]
    ),
    httpRequests: counter(
      "signal_engine_http_requests_total",
      "HTTP requests answered, by method, route template and status",
      ["method", "route", "status"]
    ),
    httpDuration: histogram(
      "signal_engine_http_request_duration_seconds",
      "HTTP request durations, from the server reading the request to its response, by method and route template",
      ["method", "route"]
    )
  }
}

/**
 * The running service's metrics. A reference with a default, so that what runs without a server
 * (replay, the CLI, unit tests) needs nothing provided; the server provides its own
 * (src/main.ts), which /metrics reads.
 */
export const Metrics = Context.Reference<EngineMetrics>("signal-engine/observability/Metrics", { defaultValue: makeMetrics })

/** Seconds since `startedMs` (a `performance.now()` reading). */
export const secondsSince = (startedMs: number) => (performance.now() - startedMs) / 1000
