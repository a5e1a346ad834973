import type { CorpusGoal } from "./corpus.ts"

/** Migrations and upgrades: the goal names the move; the work is what breaks on the way. */
export const migrations: ReadonlyArray<CorpusGoal> = [
  {
    id: "migration-orders-postgres",
    kind: "migration",
    goal: "Migrate the orders table from MySQL to Postgres",
    cwd: "/home/dev/shop-backend",
    work: [
      "plan for moving orders over without downtime",
      "dual write first: write to both in OrderRepository, read from the old one",
      { read: "src/orders/OrderRepository.ts" }, { edit: "src/orders/OrderRepository.ts" },
      "create the new schema, map tinyint(1) to boolean and datetime to timestamptz",
      { write: "db/pg/001_orders.sql" },
      "backfill script with batches of 5000 by id",
      { write: "scripts/backfill-orders.ts" },
      "the timestamps are off by 2 hours after the import",
      "those datetimes are in server local time, treat them as europe/amsterdam when converting",
      { edit: "scripts/backfill-orders.ts" },
      "write a checker that compares row counts and checksums per day",
      { write: "scripts/verify-orders.ts" }, { bash: "npx tsx scripts/verify-orders.ts --from 2023-01-01" },
      "17 mismatches on 2023-03-26, that's the DST day again",
      { edit: "scripts/backfill-orders.ts" },
      "now switch reads behind a feature flag",
      { edit: "src/orders/OrderRepository.ts" }
    ],
    off: [
      "what should I name my sourdough starter",
      "add a loyalty points feature",
      "how do I change a bike tire",
      "write a linkedin post about our series A",
      "set up github copilot in vscode"
    ],
    drift: [
      "the marketing team needs a newsletter signup form on the homepage",
      { read: "src/web/pages/home.tsx" },
      "post it to mailchimp's api",
      { write: "src/web/api/newsletter.ts" },
      "add a honeypot field against bots",
      "run the dev server"
    ]
  },
  {
    id: "migration-react-18",
    kind: "migration",
    goal: "Upgrade the app from React 17 to React 18",
    cwd: "/home/dev/portal",
    work: [
      "bump react and react-dom and fix what breaks",
      { bash: "npm i react@18 react-dom@18 @types/react@18 @types/react-dom@18" },
      "switch ReactDOM.render to createRoot in index.tsx",
      { edit: "src/index.tsx" },
      "Warning: ReactDOM.render is no longer supported in React 18. Use createRoot instead.\n    at setupTests.ts:4",
      { edit: "src/setupTests.ts" },
      "enzyme doesn't support it, how many tests use enzyme?",
      { grep: "from 'enzyme'", path: "src" },
      "migrate those 14 files to testing-library",
      { edit: "src/components/Table/Table.test.tsx" },
      "automatic batching broke the wizard, the step counter updates twice now",
      { read: "src/components/Wizard/Wizard.tsx" }, { edit: "src/components/Wizard/Wizard.tsx" },
      "StrictMode double-invokes effects, the analytics effect fires twice in dev, is that fine?",
      "npm test -- --watchAll=false",
      { bash: "npm test -- --watchAll=false" },
      "should we upgrade react-router too? no, keep it for a separate PR"
    ],
    off: [
      "how long do I boil an egg for a runny yolk",
      "add a csv download to the reports table",
      "what's the difference between stocks and bonds",
      "write a haiku about javascript",
      "set up renovate for dependency updates"
    ],
    drift: [
      "can we design the new onboarding checklist widget? 5 steps with progress",
      { write: "src/components/Onboarding/Checklist.tsx" },
      "persist completed steps on the server",
      "animate the progress bar",
      { edit: "src/components/Onboarding/Checklist.tsx" }
    ]
  },
  {
    id: "migration-jenkins-actions",
    kind: "migration",
    goal: "Move CI from Jenkins to GitHub Actions",
    cwd: "/home/dev/payments-service",
    work: [
      "convert the Jenkinsfile to a workflow",
      { read: "Jenkinsfile" },
      "stages: lint, unit tests, build docker image, push to ecr on main",
      { write: ".github/workflows/ci.yml" },
      "use oidc to assume the aws role instead of stored keys",
      { edit: ".github/workflows/ci.yml" },
      "the integration tests need postgres, add a service container",
      { edit: ".github/workflows/ci.yml" },
      "cache the gradle dependencies",
      { edit: ".github/workflows/ci.yml" },
      "act -j test",
      { bash: "act -j test" },
      "Error: Unable to locate credentials. You can configure credentials by running \"aws configure\".",
      "right, oidc doesn't work in act, skip the push job locally",
      { edit: ".github/workflows/ci.yml" },
      "run actionlint",
      { bash: "actionlint" },
      "delete the Jenkinsfile once it's green on main",
      { bash: "git rm Jenkinsfile" }
    ],
    off: [
      "what are good board games for 2 players",
      "add idempotency keys to the refund endpoint",
      "explain quantum entanglement simply",
      "write a text to my neighbor about their barking dog",
      "add prometheus metrics to the payment processor"
    ],
    drift: [
      "the pager just went off: p99 latency on /charge is 3s",
      { bash: "kubectl logs deploy/payments -n prod --since=1h | grep -i timeout" },
      "connections to the card vault are timing out, increase the pool?",
      { edit: "src/main/resources/application.yml" },
      "roll it out to prod",
      { bash: "kubectl rollout restart deploy/payments -n prod" }
    ]
  },
  {
    id: "migration-uploads-s3",
    kind: "migration",
    goal: "Move file uploads from local disk to S3",
    cwd: "/home/dev/forum",
    work: [
      "attachments are saved to MEDIA_ROOT on the web servers, let's get them off the boxes",
      "use django-storages with boto3",
      { bash: "pip install django-storages boto3" }, { edit: "requirements.txt" }, { edit: "forum/settings/production.py" },
      "private bucket, serve through presigned urls valid for 10 minutes",
      { edit: "forum/attachments/views.py" },
      "migrate existing files: a management command that uploads and keeps the same keys",
      { write: "forum/attachments/management/commands/upload_media_to_s3.py" },
      "make it resumable, skip files already in the bucket",
      { edit: "forum/attachments/management/commands/upload_media_to_s3.py" },
      "python manage.py upload_media_to_s3 --dry-run",
      { bash: "python manage.py upload_media_to_s3 --dry-run" },
      "avatars too, but those can be public-read with cloudfront in front",
      { edit: "forum/settings/production.py" },
      "tests use the filesystem storage, keep it that way",
      { bash: "pytest forum/attachments" }
    ],
    off: [
      "write a poem for mother's day",
      "add emoji reactions to forum posts",
      "how do I unclog a drain without chemicals",
      "what's the best laptop for programming under $1500",
      "set up rate limiting for the login view"
    ],
    drift: [
      "moderators want a report of the top 20 posters this month",
      { write: "forum/reports/top_posters.py" },
      "exclude staff accounts",
      "email it to them every monday",
      { edit: "forum/celery_schedule.py" }
    ]
  },
  {
    id: "migration-moment-date-fns",
    kind: "migration",
    goal: "Replace Moment.js with date-fns",
    cwd: "/home/dev/hr-portal",
    work: [
      "it's 70kb of our bundle, get rid of it everywhere",
      { grep: "from 'moment'", path: "src" },
      "42 files, start with the utils in src/lib/dates.ts",
      { read: "src/lib/dates.ts" }, { edit: "src/lib/dates.ts" },
      "moment().format('DD MMM YYYY') -> format(date, 'dd MMM yyyy'), careful with the tokens",
      "the leave calendar uses moment-range, what's the equivalent",
      { edit: "src/features/leave/LeaveCalendar.tsx" },
      "add an eslint rule banning moment imports",
      { edit: ".eslintrc.cjs" },
      "npx tsc --noEmit",
      { bash: "npx tsc --noEmit" },
      "fix those type errors",
      { edit: "src/features/payroll/PayPeriod.ts" },
      "check the bundle size now",
      { bash: "npx vite-bundle-visualizer" },
      "remove it from package.json",
      { edit: "package.json" }
    ],
    off: [
      "what's a good book about stoicism",
      "add an approval workflow for expense reports",
      "how do I clean a cast iron pan",
      "set up storybook for the design system",
      "write a thank you card for my kid's teacher"
    ],
    drift: [
      "hr wants the org chart page to show managers' photos",
      { read: "src/features/org-chart/OrgChart.tsx" },
      "photos come from the directory api /people/:id/photo",
      { edit: "src/features/org-chart/OrgChart.tsx" },
      "fallback to initials"
    ]
  },
  {
    id: "migration-python-312",
    kind: "migration",
    goal: "Upgrade the ingestion service from Python 3.8 to 3.12",
    cwd: "/home/dev/ingest",
    work: [
      "we need to get off 3.8 before it's out of support",
      { edit: "Dockerfile" }, { edit: "pyproject.toml" },
      "pip install fails: numpy==1.21 has no wheel for 3.12",
      "bump numpy and pandas to versions that have wheels",
      { edit: "pyproject.toml" }, { bash: "uv pip compile pyproject.toml -o requirements.lock" },
      "DeprecationWarning: datetime.datetime.utcnow() is deprecated and scheduled for removal in a future version.",
      "replace utcnow with datetime.now(UTC) everywhere",
      { grep: "utcnow", path: "ingest" }, { edit: "ingest/clock.py" },
      "distutils is gone, what imports it?",
      { grep: "distutils", path: "." },
      "replace LooseVersion with packaging.version",
      { edit: "ingest/compat.py" },
      "tox -e py312",
      { bash: "tox -e py312" },
      "update the CI matrix to 3.11 and 3.12",
      { edit: ".github/workflows/test.yml" }
    ],
    off: [
      "how do I make cold brew coffee",
      "add retries with backoff to the kafka producer",
      "explain the difference between TCP and UDP",
      "write my out-of-office reply for next week",
      "recommend some sci-fi books"
    ],
    drift: [
      "a customer says their webhook deliveries stopped yesterday",
      { bash: "grep -r 'customer_id=8812' /var/log/ingest/ | tail" },
      "their endpoint returns 410, should we auto-disable on 410?",
      { edit: "ingest/webhooks/deliver.py" },
      "write them an email explaining it"
    ]
  }
]
