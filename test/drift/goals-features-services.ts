import type { CorpusGoal } from "./corpus.ts"

/** Features of APIs, back offices and mobile apps. */
export const serviceFeatures: ReadonlyArray<CorpusGoal> = [
  {
    id: "feature-api-rate-limits",
    kind: "feature",
    goal: "Add per-key rate limiting to the public API",
    cwd: "/home/dev/api",
    work: [
      "we need limits per api key on the public api, 100 req/min default, configurable per plan",
      { read: "app/main.py" }, { read: "app/auth/api_keys.py" },
      "token bucket in redis, use a lua script so it's atomic",
      { write: "app/ratelimit/bucket.lua" }, { write: "app/ratelimit/limiter.py" },
      "wire it as a fastapi dependency on the v1 router",
      { edit: "app/api/v1/__init__.py" },
      "return 429 with Retry-After and X-RateLimit-* headers",
      { edit: "app/ratelimit/limiter.py" },
      "read the per-plan numbers from the plans table",
      { read: "app/models/plan.py" }, { edit: "app/ratelimit/limiter.py" },
      "pytest tests/ratelimit -x",
      { bash: "pytest tests/ratelimit -x" },
      "the test with fakeredis fails on EVALSHA, fall back to EVAL",
      { edit: "app/ratelimit/limiter.py" }, { bash: "pytest tests/ratelimit -x" },
      "document the headers in the api reference",
      { edit: "docs/api/rate-limits.md" }
    ],
    off: [
      "write a love letter from a toaster to a fridge",
      "what's the best time of year to visit iceland",
      "add an endpoint to export invoices as pdf",
      "explain how a b-tree index works",
      "my kid's science fair project is about plants, give me ideas"
    ],
    drift: [
      "the data team wants a nightly export of events to s3 as parquet",
      { write: "app/jobs/export_events.py" },
      "use pyarrow, partition by date",
      "schedule it with the existing apscheduler setup",
      { edit: "app/scheduler.py" },
      "test it locally against minio"
    ]
  },
  {
    id: "feature-android-push",
    kind: "feature",
    goal: "Add push notifications for new messages on Android",
    cwd: "/home/dev/chat-android",
    work: [
      "set up firebase cloud messaging in the app module",
      { edit: "app/build.gradle.kts" }, { write: "app/src/main/java/com/chat/push/ChatMessagingService.kt" },
      "register the service in the manifest",
      { edit: "app/src/main/AndroidManifest.xml" },
      "send the FCM token to POST /devices after login",
      { edit: "app/src/main/java/com/chat/auth/LoginViewModel.kt" },
      "on android 13 we need the POST_NOTIFICATIONS runtime permission, ask after the first message is sent",
      { edit: "app/src/main/java/com/chat/conversation/ConversationFragment.kt" },
      "build a channel 'messages' with the sender avatar as large icon",
      { edit: "app/src/main/java/com/chat/push/ChatMessagingService.kt" },
      "tapping it should deep link into the conversation",
      { edit: "app/src/main/res/navigation/nav_graph.xml" },
      "./gradlew assembleDebug",
      { bash: "./gradlew assembleDebug" },
      "Execution failed for task ':app:processDebugGoogleServices'.\n> File google-services.json is missing.",
      "I put it in app/ now, build again",
      { bash: "./gradlew assembleDebug" },
      "group multiple messages from the same chat into one"
    ],
    off: [
      "what's a good name for a bakery",
      "how do vaccines work",
      "migrate the app to jetpack compose navigation",
      "write a resignation letter, polite and short",
      "add an in-app purchase for premium stickers"
    ],
    drift: [
      "the play store rejected the build because of the data safety form, help me fill it",
      "we collect email, phone number and messages",
      "is the crash reporting data 'shared'?",
      "write the final answers as a list I can paste"
    ]
  },
  {
    id: "feature-audit-log",
    kind: "feature",
    goal: "Add an audit log for admin actions",
    cwd: "/home/dev/admin-api",
    work: [
      "every admin action (ban user, refund, change plan) should write an entry somewhere we can query",
      { grep: "@Roles('admin')", path: "src" },
      "make an AuditLog entity: actor, action, target, metadata json, created_at",
      { write: "src/audit/audit-log.entity.ts" }, { write: "src/migrations/1712000000000-AuditLog.ts" },
      "an interceptor that records it for any handler with @Audited('action.name')",
      { write: "src/audit/audited.decorator.ts" }, { write: "src/audit/audit.interceptor.ts" },
      "put @Audited on the ban, refund and plan change endpoints",
      { edit: "src/users/users.controller.ts" }, { edit: "src/billing/refunds.controller.ts" },
      "don't store the card details in metadata for refunds",
      { edit: "src/audit/audit.interceptor.ts" },
      "GET /admin/audit with filters by actor and date range, paginated",
      { write: "src/audit/audit.controller.ts" },
      "npm run test:e2e -- audit",
      { bash: "npm run test:e2e -- audit" },
      "run the migration locally",
      { bash: "npm run typeorm migration:run" }
    ],
    off: [
      "suggest a weekend itinerary for copenhagen",
      "how do I fix a leaking faucet",
      "speed up the docker build for this repo",
      "write an email to a customer explaining yesterday's outage",
      "explain what a merkle tree is"
    ],
    drift: [
      "urgent: support says refunds over $500 fail with 'amount exceeds limit'",
      { grep: "amount exceeds limit", path: "src" }, { read: "src/billing/refunds.service.ts" },
      "the limit is hardcoded, move it to config and set 5000",
      { edit: "src/billing/refunds.service.ts" },
      "deploy to staging"
    ]
  },
  {
    id: "feature-offline-mode",
    kind: "feature",
    goal: "Add an offline mode to the field inspection app that syncs when back online",
    cwd: "/home/dev/inspect-app",
    work: [
      "inspectors lose their work when there's no signal in the basement",
      "store draft inspections in sqlite with expo-sqlite",
      { bash: "npx expo install expo-sqlite" }, { write: "src/db/drafts.ts" },
      "queue mutations and replay them in order when netinfo says connected",
      { write: "src/sync/queue.ts" }, { bash: "npx expo install @react-native-community/netinfo" },
      "photos too, they're big. save to the file system and upload later",
      { edit: "src/sync/queue.ts" },
      "what if the same inspection was edited on the web meanwhile? server wins but keep a copy",
      { edit: "src/sync/queue.ts" },
      "show a banner '3 changes pending'",
      { write: "src/components/OfflineBanner.tsx" },
      "npx jest src/sync",
      { bash: "npx jest src/sync" },
      "simulate airplane mode in the e2e with detox",
      { write: "e2e/offline.e2e.ts" }
    ],
    off: [
      "what are good houseplants for low light",
      "add google maps directions to the site address",
      "write a wedding speech for my best friend",
      "how do interest rates affect house prices",
      "set up codepush for hotfixes"
    ],
    drift: [
      "switching to the admin portal for a bit: the pdf export cuts off the last page",
      { read: "/home/dev/inspect-admin/src/export/pdf.ts" },
      "it's a page break issue with the signatures block",
      { edit: "/home/dev/inspect-admin/src/export/pdf.ts" },
      "regenerate the sample report"
    ]
  }
]
