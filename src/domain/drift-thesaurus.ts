import { stem } from "./drift-stem.ts"

/**
 * A thesaurus of software work for the goal-drift detector: each line is one concept, the words and
 * two-word phrases (joined by `+`) that name it or a part of it. A prompt and a goal that share no
 * word but a concept ("sign-in" and "login", "CSS variables" and "dark mode", "cache" and "speed
 * up") are about the same thing. Written from the domain, not from the corpus: a word belongs to a
 * concept when a developer would take it as naming that concept.
 *
 * Part of the detector's method (its version, `driftMethod` in drift.ts): a change here changes
 * what the fold derives, so it is a new version, measured on the corpus.
 */
const table = `
auth authn authz authentication authenticate authorization login logins logon logout signin sign+in log+in signout sign+out password passwords passwd credential credentials sso saml oauth oidc jwt 2fa mfa otp totp passkey webauthn okta auth0 keycloak ldap identity idp reset+password
signup sign+up register registration onboard onboarding invite invitation
theme themes theming dark+mode light+mode darkmode palette color colors colour colours css scss sass stylesheet styles styling tailwind contrast prefers+color
ci cd pipeline pipelines workflow workflows github+actions gha actionlint jenkins jenkinsfile circleci buildkite runner runners travis stage stages matrix shard shards sharding artifact artifacts
cache caching cached memoize memoization lru redis memcached cdn warm
performance perf speed speedup speed+up fast faster fastest slow slower slowness sluggish latency p50 p95 p99 throughput optimize optimization bottleneck profile profiling profiler benchmark benchmarks lighthouse lcp timing cache caching lazy
memory leak leaks leaking heap rss oom gc garbage allocation allocations retained snapshot buffer buffers
race races concurrent concurrency mutex lock locks locking atomic atomics thread threads goroutine goroutines deadlock synchronized sync+map parallel
rate+limit ratelimit ratelimiter ratelimiting throttle throttling 429 token+bucket quota quotas retry-after
database db sql postgres postgresql psql pg mysql sqlite mariadb table tables schema schemas query queries orm hibernate prisma typeorm knex sequelize activerecord jdbc select join joins transaction transactions row rows column columns index indexes n+1 statement statements
migrate migrating migration migrations upgrade upgrades upgrading bump deprecated deprecation backfill legacy eol codemod
date dates timezone timezones time+zone tz dst daylight utc gmt timestamp timestamps datetime datetimes calendar calendars clock moment date-fns datefns dayjs luxon hour hours schedule
i18n l10n internationalization localization localisation locale locales translate translation translations translator language languages intl multilingual english german french spanish italian japanese rtl en de fr es ja zh pt nl
unicode utf utf8 ascii latin latin1 encoding encode decode charset bom nfc nfkc nfd normalize normalization emoji accents accented diacritics characters codec
csv tsv xlsx xls excel spreadsheet spreadsheets export exports exporting import imports importing
upload uploads uploading attachment attachments storage storages s3 bucket buckets blob blobs media presigned cloudfront disk boto boto3
email emails e-mail mail mailer mailing smtp sendgrid mailchimp ses newsletter inbox template templates
notification notifications notify push+notification fcm apns firebase+messaging sms alert alerts badge
payment payments pay billing bill invoice invoices invoicing stripe checkout subscription subscriptions pricing price prices refund refunds charge charges card cards paypal apple+pay customer+portal credit+note plans
search searching full-text fulltext elasticsearch opensearch lunr pagefind algolia typesense meilisearch
metrics metric prometheus grafana dashboard dashboards alerting monitoring observability histogram histograms counter gauge scrape datadog tracing traces otel opentelemetry slo
log logs logging logger pino winston logback structlog
docker dockerfile container containers containerize containerized compose docker-compose podman buildx image+layer ecr registry
kubernetes k8s kubectl helm pod pods deployment replica replicas hpa keda autoscaling autoscale autoscaler scale scaling node+group namespace namespaces cluster clusters
terraform tf aws gcp azure vpc subnet subnets rds ecs iam cloudformation pulumi infra infrastructure provision provisioning
secret secrets vault credentials api+key api+keys dotenv env rotation rotate gitleaks kms hardcoded
doc docs documentation document documented readme guide guides tutorial reference adr decision+record changelog example examples typedoc jsdoc docstring runbook wiki markdown
react render renders rendering rerender re-render component components hook hooks useeffect usememo usestate usecallback jsx props redux zustand reducer reducers selector selectors store strictmode batching suspense createroot hydrate hydration
ios android iphone ipad swift swiftui uikit kotlin xcode xcodebuild simulator emulator testflight react+native expo gradle+plugin
video videos player playback stream streaming audio hls avplayer
image images img thumbnail thumbnails thumb thumbs resize resizing sharp imagemagick jpg jpeg png webp photo photos picture pictures avatar avatars
rotate rotation rotating landscape portrait orientation layout constraint constraints autolayout responsive
queue queues job jobs worker workers background celery sidekiq rabbitmq kafka sqs pubsub consumer consumers producer producers broker brokers event+bus topic topics message+queue
cron schedule scheduled scheduler scheduling nightly daily weekly beat apscheduler periodic
undo redo restore restored soft+delete trash recover deleted temporal
offline online sync syncing synchronize connectivity netinfo airplane+mode network reconnect pending
accessibility a11y aria wcag screen+reader
audit audited auditing trail activity+log
dependency+injection injection inject injected injectable di ioc container constructor+injection wire wiring
async await promise promises callback callbacks coroutine asyncio futures resolve resolves reject rejected rejection pyramid callback+hell
refactor refactoring restructure extract split module modules package packages rename renamed reorganize cleanup modularize decouple interface interfaces
bundle bundles bundler bundle+size tree-shaking treeshaking size-limit minify minified code+splitting webpack vite rollup esbuild
deploy deploys deployed deploying deployment release releases rollout rollback staging production prod canary
webhook webhooks callback+url event+types signature signatures hmac
rate+limits limit limits limiting
duplicate duplicates duplicated dedupe deduplicate deduplication idempotent idempotency unique uniqueness upsert twice
config configuration configure configs settings toml yaml yml ini dotfile preferences
infinite loop loops looping freeze freezes frozen hang hangs stuck
adr decision+record consequences alternatives tradeoff tradeoffs deciders proposed superseded
http https request requests response responses status+code headers header rest graphql grpc
`.trim().split("\n").map((line) => line.trim().split(/\s+/))

const words = new Map<string, Array<number>>()
const phrases = new Map<string, Array<number>>()
table.forEach((line, concept) => {
  for (const entry of line) {
    const parts = entry.split("+")
    const target = parts.length === 2 ? phrases : words
    const key = parts.length === 2 ? `${stem(parts[0]!)} ${stem(parts[1]!)}` : stem(entry.replace(/[-_]/g, ""))
    const list = target.get(key) ?? []
    if (!list.includes(concept)) list.push(concept)
    target.set(key, list)
  }
})

/** Members long enough that a word they begin is taken as the same word (`slow…`, `normaliz…`). */
const prefixes = [...words.keys()].filter((k) => k.length >= 4)
const memo = new Map<string, ReadonlyArray<number>>()
const none: ReadonlyArray<number> = []

/** The concepts a stemmed word names: its own entry, or that of a member of five or more letters it begins with. */
export const conceptsOf = (stemmed: string): ReadonlyArray<number> => {
  const exact = words.get(stemmed)
  if (exact !== undefined) return exact
  const known = memo.get(stemmed)
  if (known !== undefined) return known
  let found: Array<number> | undefined
  for (const p of prefixes) {
    if (stemmed.length > p.length && stemmed.startsWith(p)) { for (const c of words.get(p)!) (found ??= []).includes(c) || found.push(c) }
  }
  if (memo.size > 50_000) memo.clear()
  memo.set(stemmed, found ?? none)
  return found ?? none
}

/** The concepts a two-word phrase (stems joined by a space) names. */
export const phraseConcepts = (stems: string): ReadonlyArray<number> => phrases.get(stems) ?? none
