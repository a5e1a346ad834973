import type { CorpusGoal } from "./corpus.ts"

/** Bugs in services and tools: the goal names a symptom; the work chases it through traces, files and tests. */
export const bugs: ReadonlyArray<CorpusGoal> = [
  {
    id: "bug-login-unicode",
    kind: "bug",
    goal: "Fix the login bug in the auth service",
    cwd: "/home/dev/acme/auth-service",
    work: [
      "why does the sign-in endpoint return 500 when the password has unicode characters",
      { grep: "normalize", path: "src" }, { read: "src/auth/session.ts" },
      "look at src/auth/session.ts, I think the hashing happens before we normalize the input",
      { read: "src/auth/hash.ts" },
      "TypeError: Cannot read properties of undefined (reading 'normalize')\n    at hashPassword (src/auth/hash.ts:42:18)\n    at createSession (src/auth/session.ts:88:21)",
      { edit: "src/auth/hash.ts" },
      "use NFKC there, not NFC",
      { bash: "npm test -- src/auth" },
      "run the tests again",
      { bash: "npm test -- src/auth" },
      "add a test with an emoji password and one with combining accents",
      { edit: "test/auth/hash.test.ts" }, { bash: "npm test -- test/auth/hash.test.ts" },
      "does the password reset flow have the same problem?",
      { read: "src/auth/reset.ts" },
      "ok apply the same fix there",
      { edit: "src/auth/reset.ts" },
      "commit this with a good message",
      { bash: "git commit -am 'Normalize passwords before hashing'" }
    ],
    off: [
      "write a short toast for my sister's wedding, something funny but not embarrassing",
      "what's the difference between a roth ira and a traditional one",
      "add pagination to the admin users table in the dashboard",
      "draft a slack message telling the team I'll miss standup tomorrow",
      "how do I make a sourdough starter"
    ],
    drift: [
      "different thing: the stripe webhook handler is timing out in prod, can you look at src/billing/webhooks.ts",
      { read: "src/billing/webhooks.ts" },
      "move the invoice email out of the request path into a queue job",
      { edit: "src/billing/webhooks.ts" }, { write: "src/jobs/send-invoice.ts" },
      "run the tests",
      { bash: "npm test -- src/billing" },
      "also mention the new timeout in the billing runbook"
    ]
  },
  {
    id: "bug-resize-leak",
    kind: "bug",
    goal: "Fix the memory leak in the image resize worker",
    cwd: "/home/dev/pixel/worker",
    work: [
      "the resize worker's RSS grows to 3GB after a few hours, find out why",
      { read: "src/worker.ts" }, { read: "src/resize.ts" },
      "I took a heap snapshot, most retained size is Buffer from sharp pipelines, are we not destroying the streams?",
      { grep: "sharp(", path: "src" },
      "yeah add a finally that calls destroy() on both streams",
      { edit: "src/resize.ts" },
      "also the LRU of decoded thumbnails has no max size",
      { read: "src/thumb-cache.ts" },
      "cap it at 200 entries or 256MB whichever comes first",
      { edit: "src/thumb-cache.ts" },
      "write a soak test that resizes 10k images and asserts heap stays under 300MB",
      { write: "test/soak/resize-soak.test.ts" }, { bash: "npm run test:soak" },
      "it passed locally, 180MB peak. run it once more with --expose-gc",
      { bash: "node --expose-gc node_modules/.bin/vitest run test/soak" },
      "ok push the branch and open a PR",
      { bash: "git push -u origin fix/resize-leak && gh pr create --fill" }
    ],
    off: [
      "what's a good gift for a 6 year old who likes dinosaurs",
      "write a cover letter for a staff engineer role at a fintech",
      "add dark mode to the marketing site footer",
      "translate 'see you next week' into japanese, polite form",
      "summarize the plot of dune part two"
    ],
    drift: [
      "can you write three system design interview questions for a senior backend candidate",
      "make the second one about rate limiting",
      "and give me a rubric for scoring it",
      "put it all in a markdown doc",
      { write: "/home/dev/notes/interview-questions.md" }
    ]
  },
  {
    id: "bug-csv-export-encoding",
    kind: "bug",
    goal: "Fix the CSV export crashing on non-ASCII customer names",
    cwd: "/home/dev/crm-backend",
    work: [
      "exporting customers blows up with UnicodeEncodeError: 'latin-1' codec can't encode character '\\u0142' in position 14",
      { grep: "latin-1", path: "crm" }, { read: "crm/exports/views.py" },
      "why is the response encoded as latin-1 there",
      "set the charset to utf-8 and write a BOM so excel opens it right",
      { edit: "crm/exports/views.py" },
      "does the streaming version in crm/exports/stream.py do the same?",
      { read: "crm/exports/stream.py" }, { edit: "crm/exports/stream.py" },
      "add a regression test with a customer named Łukasz Żółć",
      { edit: "crm/exports/tests/test_views.py" }, { bash: "pytest crm/exports -q" },
      "run pytest on that folder again",
      { bash: "pytest crm/exports -q" },
      "also check the xlsx path with the same customers",
      { read: "crm/exports/xlsx.py" },
      "fine, leave xlsx alone. write the changelog entry",
      { edit: "CHANGELOG.md" }
    ],
    off: [
      "what are some good names for a golden retriever puppy",
      "set up celery beat to send the weekly digest email",
      "how does python's GIL affect asyncio",
      "recommend a mechanical keyboard under $150",
      "write a haiku about mondays"
    ],
    drift: [
      "totally unrelated but can you help me plan 4 days in lisbon in may",
      "we like food and walking, not museums",
      "what about a day trip to sintra",
      "make it a table by day"
    ]
  },
  {
    id: "bug-ratelimit-race",
    kind: "bug",
    goal: "Fix the data race in the rate limiter middleware",
    cwd: "/home/dev/gateway",
    work: [
      "go test -race ./... flags something in middleware/ratelimit.go, can you look",
      { bash: "go test -race ./middleware/..." }, { read: "middleware/ratelimit.go" },
      "WARNING: DATA RACE\nWrite at 0x00c0001a4090 by goroutine 23:\n  gateway/middleware.(*bucket).take()\n      middleware/ratelimit.go:61 +0x84\nPrevious read at 0x00c0001a4090 by goroutine 19:\n  gateway/middleware.(*bucket).refill()",
      "put a mutex on bucket, or would atomics be cleaner here?",
      "go with the mutex, simpler",
      { edit: "middleware/ratelimit.go" },
      "rerun with -race and -count=20",
      { bash: "go test -race -count=20 ./middleware/..." },
      "getBucket also writes the map of buckets per client key without a lock",
      { edit: "middleware/ratelimit.go" },
      "use sync.Map? we have way more reads than writes",
      { edit: "middleware/ratelimit.go" }, { bash: "go test -race -count=20 ./middleware/..." },
      "benchmark before and after",
      { bash: "go test -bench=. -benchmem ./middleware/" },
      "ok good, commit and push",
      { bash: "git commit -am 'Guard rate limiter buckets against concurrent refills' && git push" }
    ],
    off: [
      "what should I cook tonight with chickpeas, spinach and feta",
      "write the terraform for a new s3 bucket for logs",
      "explain the difference between a mortgage apr and the interest rate",
      "add a /healthz endpoint to the admin service",
      "who won the champions league in 2019"
    ],
    drift: [
      "can you help me write the Q3 OKRs for the platform team",
      "three objectives, make one about developer experience",
      "key results should be measurable, rewrite them",
      "shorter",
      "export it in a format I can paste into google docs"
    ]
  },
  {
    id: "bug-orders-n-plus-one",
    kind: "bug",
    goal: "Fix the N+1 queries that make the orders API slow",
    cwd: "/home/dev/orders-service",
    work: [
      "GET /api/orders takes 4s for 50 orders, hibernate logs show one select per line item",
      { read: "src/main/java/com/acme/orders/OrderController.java" }, { read: "src/main/java/com/acme/orders/Order.java" },
      "add a fetch join for lineItems in the repository query",
      { edit: "src/main/java/com/acme/orders/OrderRepository.java" },
      "org.hibernate.loader.MultipleBagFetchException: cannot simultaneously fetch multiple bags: [Order.lineItems, Order.payments]",
      "change lineItems to a Set then, or use @BatchSize on payments",
      { edit: "src/main/java/com/acme/orders/Order.java" },
      "turn on statement statistics in the test profile so we can assert the count",
      { edit: "src/test/resources/application-test.yml" },
      "write an integration test that fails if more than 3 statements run",
      { write: "src/test/java/com/acme/orders/OrderQueryCountIT.java" }, { bash: "./mvnw -q verify -Dit.test=OrderQueryCountIT" },
      "./mvnw verify again pls",
      { bash: "./mvnw -q verify" },
      "what's the p95 now in the local load test",
      { bash: "k6 run load/orders.js" },
      "nice, 180ms. write the PR description"
    ],
    off: [
      "write a birthday poem for my dad who loves fishing",
      "how do I configure logback to output json",
      "add swagger docs to the customer service",
      "what's the difference between an IPA and a pale ale",
      "convert this recipe from cups to grams: 2 cups flour, 1 cup sugar"
    ],
    drift: [
      "I need an abstract for my devoxx talk about event sourcing, 150 words",
      "make the title catchier",
      "now an outline with 5 sections, 30 minutes total",
      "add speaker notes for section 2"
    ]
  },
  {
    id: "bug-config-panic",
    kind: "bug",
    goal: "Fix the panic when the config file is empty",
    cwd: "/home/dev/tidy",
    work: [
      "thread 'main' panicked at src/config.rs:48:37:\ncalled `Option::unwrap()` on a `None` value\n\nhappens when ~/.tidy.toml exists but is empty",
      { read: "src/config.rs" },
      "return a default Config when the file is empty instead of unwrapping",
      { edit: "src/config.rs" },
      "and give a proper error with the path when the toml doesn't parse, use anyhow context",
      { edit: "src/config.rs" }, { edit: "src/main.rs" },
      "cargo test",
      { bash: "cargo test" },
      "add tests for empty, whitespace-only and invalid toml",
      { edit: "src/config.rs" }, { bash: "cargo test config" },
      "clippy complains about needless_return, fix",
      { bash: "cargo clippy -- -D warnings" }, { edit: "src/config.rs" },
      "update the changelog under unreleased",
      { edit: "CHANGELOG.md" },
      "tag it as 0.4.1? no wait just commit, I'll tag later",
      { bash: "git commit -am 'Treat an empty config file as the defaults'" }
    ],
    off: [
      "how do I get red wine out of a carpet",
      "write a bash one-liner to rename all jpgs in a folder to lowercase",
      "add a --json output flag to the list command",
      "explain monads like I'm five",
      "plan a 3 day hiking trip in the dolomites"
    ],
    drift: [
      "next up: generate shell completions for bash, zsh and fish with clap_complete",
      { edit: "Cargo.toml" }, { write: "src/completions.rs" },
      "wire it as a hidden `tidy completions <shell>` subcommand",
      { edit: "src/main.rs" },
      "cargo build",
      { bash: "cargo build" },
      "add install instructions for them to the readme"
    ]
  },
  {
    id: "bug-revenue-duplicates",
    kind: "bug",
    goal: "Fix duplicate rows in the daily revenue report",
    cwd: "/home/dev/analytics-dags",
    work: [
      "the daily_revenue table has duplicate rows for 2024-03-02, totals are doubled",
      { read: "dags/daily_revenue.py" },
      "the task retried after a timeout and the insert isn't idempotent",
      "change it to delete-then-insert for the partition date inside one transaction",
      { edit: "dags/daily_revenue.py" },
      "or better a MERGE on (date, store_id)?",
      "yeah use MERGE, snowflake supports it",
      { edit: "dags/sql/daily_revenue.sql" },
      "write a dbt test for uniqueness on date + store_id",
      { write: "models/marts/schema.yml" }, { bash: "dbt test --select daily_revenue" },
      "now dedupe the existing rows for the last 30 days",
      { write: "scripts/dedupe_daily_revenue.sql" },
      "dry run it first, show me the counts",
      { bash: "snowsql -f scripts/dedupe_daily_revenue.sql --variable dry_run=true" },
      "ok run it for real",
      { bash: "snowsql -f scripts/dedupe_daily_revenue.sql" }
    ],
    off: [
      "what's a good stretch for lower back pain",
      "build a looker dashboard for marketing spend by channel",
      "explain the difference between a left join and a full outer join",
      "write a thank you note to my team for the offsite",
      "how many calories are in a banana"
    ],
    drift: [
      "marketing needs a one-off: signups by utm_source for last quarter",
      { bash: "snowsql -q 'select utm_source, count(*) from signups group by 1'" },
      "split it by week",
      "export to csv and I'll send it to them",
      { bash: "snowsql -q 'select ...' -o output_format=csv > signups.csv" },
      "also add paid vs organic"
    ]
  }
]
