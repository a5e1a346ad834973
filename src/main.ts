import { Coverage } from "./store/coverage-repo.ts"
import { ToolMetrics } from "./store/tool-metrics-repo.ts"
import { NodeServices } from "@effect/platform-node"
import type { PgClient } from "@effect/sql-pg"
import { Config, Console, Effect, Layer, Logger, Option } from "effect"
import type { SqlClient } from "effect/sql"
import { AppConfig } from "./config.ts"
import { Authenticator } from "./http/auth.ts"
import { checkPortsFree } from "./http/listen-ports.ts"
import { HttpServerLive, serveApp } from "./http/server.ts"
import { DatabaseHealth } from "./store/database-health.ts"
import { Activity } from "./store/activity-repo.ts"
import { UsageExports } from "./store/usage-export-repo.ts"
import { Budgets } from "./store/budgets-repo.ts"
import { DatabaseInfo, DatabaseLive, migrate } from "./store/database.ts"
import { RateLimiter } from "./store/rate-limits.ts"
import { Rules } from "./store/rules-repo.ts"
import { Tenancy } from "./store/tenancy-repo.ts"
import { Cluster } from "./engine/cluster.ts"
import { Ingress } from "./engine/ingress.ts"
import { Processor } from "./engine/processor.ts"
import { IdleCompaction } from "./engine/idle-compaction.ts"
import { RuleCache } from "./engine/rule-cache.ts"
import { ScopeTotals } from "./engine/scope-totals.ts"
import { Pricing } from "./engine/pricing.ts"
import { Goals } from "./store/goals-repo.ts"
import { VerdictRegistry } from "./engine/verdicts.ts"
import { KafkaLog } from "./log/kafka-log.ts"
import { PgLog } from "./log/pg-log.ts"
import { type LogIdentityGuard, LogMismatch } from "./log/log-identity.ts"
import { SignalLog } from "./log/signal-log.ts"
import { logIdentityGuard, LogIdentityGuardLive } from "./store/log-identity-repo.ts"
import { Projections } from "./store/projections.ts"
import { ServingLock } from "./store/replay-lock.ts"
import { RefuseAfterUnfinishedReplay } from "./store/unfinished-replays.ts"
import { Webhooks } from "./store/webhooks-repo.ts"
import { WebhookDeliveries } from "./store/webhook-deliveries-repo.ts"
import { WebhookEvents } from "./store/webhook-events-repo.ts"
import { AuditLog } from "./store/audit-repo.ts"
import { DashboardSessions } from "./store/dashboard-sessions-repo.ts"
import { AuditRetention } from "./store/audit-retention.ts"
import { ReportSchedules } from "./store/report-schedules-repo.ts"
import { ReportJob } from "./notifications/report-job.ts"
import { WebhookConfig } from "./webhooks/config.ts"
import { WebhookDispatcher } from "./webhooks/dispatcher.ts"
import { SsoSignIn } from "./store/sso-sign-in-repo.ts"
import { SecretBox, warnOfGeneratedKey } from "./store/secret-box.ts"
import { NotificationConfig } from "./notifications/config.ts"
import { DeliveryPolicyLive } from "./notifications/delivery-policy.ts"
import { NotificationDispatcher } from "./notifications/dispatcher.ts"
import { Mailer } from "./notifications/mailer.ts"
import { Channels } from "./store/channels-repo.ts"
import { SsoSettingsStore } from "./store/sso-repo.ts"
import { Notifications } from "./store/notifications-repo.ts"
import { LogFormat, LoggingLive } from "./observability/logging.ts"
import { makeMetrics, Metrics } from "./observability/metrics.ts"
import { metricsServer, MetricsPort } from "./observability/metrics-server.ts"
import { refreshStateGauges } from "./state-gauges.ts"
import { TracingLive } from "./observability/tracing.ts"

/**
 * The one place Layers are wired. `Database` → migrated schema → repositories → HTTP.
 */

/** The migrator's optional schema dump needs the platform services; it is otherwise unused. */
const Migrated = Layer.effectDiscard(migrate.pipe(Effect.orDie)).pipe(Layer.provide(NodeServices.layer))

/**
 * Webhooks, notification channels and their configuration; secrets (webhook secrets, chat URLs)
 * are sealed with the key SecretBox holds, and the repositories apply the delivery side's policy.
 */
const WebhooksStore = Layer.mergeAll(Webhooks.layer, Channels.layer, Notifications.layer, Mailer.layer, SsoSettingsStore.layer, SsoSignIn.layer).pipe(
  Layer.provide(Layer.merge(SecretBox.layer, DeliveryPolicyLive)),
  Layer.provideMerge(Layer.merge(WebhookConfig.layer, NotificationConfig.layer))
)

/** Repositories over a migrated database (the database layer itself is provided by the caller). */
export const StoreLive = Layer.unwrap(
  Effect.map(
    AppConfig,
    (config) =>
      Layer.mergeAll(
        Tenancy.layer({ apiKeyPrefix: config.apiKeyPrefix }),
        Activity.layer,
        UsageExports.layer,
        Rules.layer,
        Budgets.layer,
        Goals.layer,
        RateLimiter.layer,
        WebhooksStore,
        WebhookDeliveries.layer,
        WebhookEvents.layer,
        AuditLog.layer,
        DashboardSessions.layer,
        ReportSchedules.layer,
        ToolMetrics.layer,
        Coverage.layer
      ).pipe(
        Layer.provideMerge(Migrated)
      )
  )
)

/**
 * The signals log: Kafka when KAFKA_BROKERS is set, else the PostgreSQL table; refused when the
 * database is fed from another log (LogMismatch, a message for the operator).
 */
const signalLogOver = (guard: Layer.Layer<LogIdentityGuard, never, SqlClient.SqlClient>) =>
  Layer.unwrap(
    Effect.map(
      Config.option(Config.String("KAFKA_BROKERS")),
      (brokers): Layer.Layer<SignalLog, LogMismatch, PgClient.PgClient | LogIdentityGuard> => {
        const log: Layer.Layer<SignalLog, unknown, PgClient.PgClient | LogIdentityGuard> = Option.isSome(brokers) ? KafkaLog.layer : PgLog.layer
        // A log that cannot start (broker unreachable, partitions misconfigured) stops start-up as a
        // defect; a mismatch stays a failure, which the CLI prints as one line for the operator.
        return Layer.effectContext(
          Layer.build(log).pipe(Effect.catch((error) => (error instanceof LogMismatch ? Effect.fail(error) : Effect.die(error))))
        )
      }
    )
  ).pipe(Layer.provideMerge(guard))

export const SignalLogLive = signalLogOver(LogIdentityGuardLive)

/** The stream processor: log consumer, partition workers and the verdicts they answer. */
const ProcessingLive = Layer.mergeAll(Ingress.layer, Processor.layer).pipe(
  Layer.provideMerge(
    Layer.mergeAll(
      SignalLogLive,
      Projections.layer,
      VerdictRegistry.layer,
      Pricing.layer,
      Cluster.layer,
      RuleCache.layer,
      ScopeTotals.layer,
      DatabaseHealth.layer
    )
  )
)

/** On the first start with an empty database, create a demo org and print its credentials once. */
const DemoBootstrap = Layer.effectDiscard(
  Effect.gen(function*() {
    const config = yield* AppConfig
    const tenancy = yield* Tenancy
    if (!config.demoBootstrap || (yield* tenancy.countOrgs) > 0) return
    const creds = yield* tenancy.bootstrap({ org: "demo", plan: "team", apiKeyPrefix: config.apiKeyPrefix })
    if ((yield* LogFormat) === "json") {
      // Log lines go to a log store: they carry no key.
      return yield* Effect.logInfo(
        "created the demo org; its keys are not logged with LOG_FORMAT=json: create them with signal-engine admin create-api-key / create-license-key"
      ).pipe(Effect.annotateLogs({ org_id: creds.org_id, user_id: creds.user_id, team_id: creds.team_id }))
    }
    yield* Console.log(
      [
        "",
        "Created the demo org (shown once; keep these):",
        `  org_id            ${creds.org_id}`,
        `  user_id           ${creds.user_id}`,
        `  team_id           ${creds.team_id}`,
        `  api_key_live      ${creds.api_key_live ?? "(none: plan below team)"}`,
        `  api_key_test      ${creds.api_key_test}`,
        `  license_key       ${creds.license_key} (${creds.license_key_environment})`,
        ""
      ].join("\n")
    )
  })
)

/** What a node says once it listens; the warnings that concern serving come first. */
const ListenBanner = Layer.effectDiscard(
  Effect.gen(function*() {
    yield* warnOfGeneratedKey
    const config = yield* AppConfig
    const db = yield* DatabaseInfo
    const log = yield* SignalLog
    const owned = (yield* Processor.use((processor) => processor.partitions)).map((p) => p.partition)
    const metricsPort = yield* MetricsPort
    const scheme = Option.isSome(config.tls) ? "https" : "http"
    const shown = config.host === "0.0.0.0" ? "localhost" : config.host
    if ((yield* LogFormat) === "json") {
      return yield* Effect.logInfo("signal-engine listening").pipe(Effect.annotateLogs({
        address: `${scheme}://${config.host}:${config.port}`,
        log: log.name,
        log_partitions: log.partitions,
        partitions_owned: owned,
        database: db.description,
        metrics: Option.match(metricsPort, { onNone: () => "off", onSome: (port) => `:${port}/metrics` })
      }))
    }
    yield* Console.log(`signal-engine listening on ${scheme}://${shown}:${config.port} (bound to ${config.host})`)
    yield* Console.log(`  dashboard      ${scheme}://${shown}:${config.port}/ (sign in with an API key)`)
    yield* Console.log(`  management API ${scheme}://${shown}:${config.port}/api/v1   engine API ${scheme}://${shown}:${config.port}/engine/v1`)
    if (Option.isSome(config.tls)) yield* Console.log(`  plain HTTP on port ${config.redirectPort} redirects to HTTPS`)
    yield* Console.log(`  database: ${db.description}`)
    yield* Console.log(`  signal log: ${log.name}, ${log.partitions} partitions (owned now: ${owned.length === 0 ? "none yet" : owned.join(",")})`)
    if (Option.isSome(metricsPort)) yield* Console.log(`  metrics: GET /metrics on port ${metricsPort.value}`)
  })
).pipe(Layer.orDie)

/** The last line a stopping service writes, once everything else has closed. */
const StopLine = Layer.effectDiscard(
  Effect.gen(function*() {
    const loggers = yield* Logger.CurrentLoggers
    yield* Effect.addFinalizer(() =>
      Effect.logInfo("signal-engine stopped: requests drained, partitions released; exiting").pipe(
        Effect.provideService(Logger.CurrentLoggers, loggers)
      )
    )
  })
)

/** Metrics (a registry per service), traces (when OTLP is configured), the log format and the stop line. */
const Observability = Layer.mergeAll(
  Layer.effect(Metrics, Effect.sync(makeMetrics)),
  TracingLive,
  LoggingLive,
  StopLine.pipe(Layer.provide(LoggingLive))
)

/** Everything the HTTP app needs, over a given database layer. */
export const appLayer = <E, R>(database: Layer.Layer<DatabaseInfo | SqlClient.SqlClient | PgClient.PgClient, E, R>) => {
  const core = Layer.unwrap(
    Effect.map(
      AppConfig,
      (config) =>
        Layer.mergeAll(
          Authenticator.layer({ apiKeyPrefix: config.apiKeyPrefix }),
          ProcessingLive,
          WebhookDispatcher,
          NotificationDispatcher,
          AuditRetention,
          ReportJob
        ).pipe(
          // Checked once migrated, before anything is consumed.
          Layer.provide(RefuseAfterUnfinishedReplay),
          Layer.provideMerge(StoreLive),
          // Held before the migrations: a node started during a replay waits for it to end.
          Layer.provide(Layer.orDie(ServingLock))
        )
    )
  ).pipe(Layer.provideMerge(database))
  return Layer.mergeAll(serveApp, ListenBanner, metricsServer(refreshStateGauges)).pipe(
    Layer.provide(HttpServerLive),
    Layer.provide(DemoBootstrap),
    Layer.provideMerge(core),
    Layer.provideMerge(AppConfig.layer),
    Layer.provide(Observability)
  )
}

/**
 * The service as `npm start` runs it; it gives memory back when idle after a burst. Its ports are
 * checked first: one in use stops it before the database starts.
 */
export const ServerLive = Layer.merge(appLayer(DatabaseLive), IdleCompaction).pipe(
  Layer.provide(Layer.effectDiscard(checkPortsFree).pipe(Layer.provide(AppConfig.layer)))
)

/** What `signal-engine migrate` needs: the configured database, which the command migrates itself to report what it applied. */
export const MigrateLive = DatabaseLive

/** What `signal-engine admin` needs: the repositories over the configured (and migrated) database. */
export const AdminLive = StoreLive.pipe(Layer.provideMerge(DatabaseLive), Layer.provideMerge(AppConfig.layer))

/**
 * What `signal-engine replay` needs: the log and the projections, over the configured database;
 * with `adoptLog`, a log other than the one the database is fed from is admitted (and recorded
 * by the command once the replay is done).
 */
export const replayLive = (options: { readonly adoptLog: boolean }) =>
  Layer.mergeAll(signalLogOver(logIdentityGuard({ adopt: options.adoptLog })), Projections.layer).pipe(Layer.provideMerge(AdminLive))
