import type { CorpusGoal } from "./corpus.ts"

/** Refactors: the goal names a shape of the code; the work is files, names and tests. */
export const refactors: ReadonlyArray<CorpusGoal> = [
  {
    id: "refactor-payments-di",
    kind: "refactor",
    goal: "Refactor the payment service to use dependency injection",
    cwd: "/home/dev/payments",
    work: [
      "PaymentService news up StripeClient and the db pool itself, which makes it untestable. let's pass them in",
      { read: "src/payments/PaymentService.ts" },
      "constructor injection, no framework",
      { edit: "src/payments/PaymentService.ts" },
      "make an interface PaymentGateway and have StripeGateway implement it",
      { write: "src/payments/PaymentGateway.ts" }, { write: "src/payments/StripeGateway.ts" },
      "wire everything in src/container.ts",
      { write: "src/container.ts" }, { edit: "src/index.ts" },
      "update the tests to use a fake gateway instead of nock",
      { edit: "test/payments/PaymentService.test.ts" },
      "npm test",
      { bash: "npm test" },
      "RefundService has the same problem, do it too",
      { edit: "src/payments/RefundService.ts" },
      "don't change any behaviour, this PR is refactor only",
      "diff looks big, split into two commits",
      { bash: "git add -p" }
    ],
    off: [
      "write a eulogy for my grandmother, she loved gardening",
      "add apple pay support",
      "what's the best way to learn spanish fast",
      "how do I file a bug report for chrome",
      "plan a kid's birthday party at home"
    ],
    drift: [
      "ok new topic: the README is outdated, rewrite the setup section for docker compose",
      { read: "README.md" }, { edit: "README.md" },
      "add a troubleshooting section for the port conflict",
      "and a badge for the build status"
    ]
  },
  {
    id: "refactor-split-utils",
    kind: "refactor",
    goal: "Split the 3000-line utils.py into modules",
    cwd: "/home/dev/legacy-app",
    work: [
      "it's 3000 lines, split it by concern into a package",
      { read: "app/utils.py" },
      "what groups do you see? strings, dates, http, money, files?",
      "create app/utils/ with those and re-export everything from __init__ for now",
      { write: "app/utils/strings.py" }, { write: "app/utils/dates.py" }, { write: "app/utils/money.py" }, { write: "app/utils/__init__.py" },
      "there's a circular import: money imports from http for currency rates",
      "move fetch_rates into a separate rates module",
      { write: "app/utils/rates.py" },
      "pytest -x",
      { bash: "pytest -x" },
      "update imports across the codebase with a codemod, then drop the re-exports",
      { bash: "python scripts/rewrite_imports.py app" },
      "ruff check --fix",
      { bash: "ruff check --fix app" },
      "any dead functions nobody calls? list them",
      { bash: "vulture app/utils" },
      "delete those"
    ],
    off: [
      "what's the best sunscreen for sensitive skin",
      "add a graphql endpoint for products",
      "how many moons does jupiter have",
      "write a short story about a robot learning to paint",
      "set up a cron to rotate logs"
    ],
    drift: [
      "ugh prod is throwing 502s, check the nginx error log",
      { bash: "ssh web1 tail -n 200 /var/log/nginx/error.log" },
      "upstream timed out, gunicorn workers are all busy",
      "bump workers to 8 and timeout to 60",
      { edit: "deploy/gunicorn.conf.py" }
    ]
  },
  {
    id: "refactor-async-await",
    kind: "refactor",
    goal: "Convert the callback-based file service to async/await",
    cwd: "/home/dev/files-api",
    work: [
      "fileService is nested callbacks and error handling everywhere, let's modernize it",
      { read: "lib/fileService.js" },
      "use fs/promises instead of fs",
      { edit: "lib/fileService.js" },
      "the express handlers still pass functions in, update them too",
      { edit: "routes/files.js" },
      "wrap handlers so rejected promises go to next(err)",
      { write: "lib/asyncHandler.js" },
      "there's a pyramid in uploadChunk with 5 levels, flatten it",
      { edit: "lib/fileService.js" },
      "mocha tests use done(), convert them",
      { edit: "test/fileService.test.js" },
      "npm t",
      { bash: "npm test" },
      "one test times out, the pipeline never resolves",
      "use stream/promises pipeline",
      { edit: "lib/fileService.js" }, { bash: "npm test" }
    ],
    off: [
      "what's a good name for a cat that's all black",
      "add virus scanning to uploads with clamav",
      "how do I start investing with $1000",
      "explain kubernetes to my mom",
      "give me a recipe for pad thai"
    ],
    drift: [
      "different task: design the schema for sharing folders with other users",
      "permissions: viewer, editor, owner",
      { write: "migrations/20240501_folder_shares.sql" },
      "what indexes do we need for 'list folders shared with me'",
      "add them"
    ]
  },
  {
    id: "refactor-notifier",
    kind: "refactor",
    goal: "Extract email sending into a separate notifications module",
    cwd: "/home/dev/marketplace",
    work: [
      "smtp calls are spread across handlers, pull them into internal/notify",
      { grep: "smtp.SendMail", path: "internal" },
      "define a Notifier interface with SendOrderConfirmation, SendPasswordReset, SendPayoutReport",
      { write: "internal/notify/notifier.go" },
      "SMTP implementation and a fake for tests",
      { write: "internal/notify/smtp.go" }, { write: "internal/notify/fake.go" },
      "move the html templates into internal/notify/templates and embed them",
      { bash: "git mv templates/email internal/notify/templates" }, { edit: "internal/notify/smtp.go" },
      "update the order handler to take a Notifier",
      { edit: "internal/orders/handler.go" },
      "go vet ./... && go test ./...",
      { bash: "go vet ./... && go test ./..." },
      "the payout job still calls smtp directly",
      { edit: "internal/payouts/job.go" },
      "good. now delete the old mailer package",
      { bash: "git rm -r internal/mailer" }
    ],
    off: [
      "what's the difference between a latte and a flat white",
      "add search by seller name",
      "help me write a complaint to my airline about lost luggage",
      "what is the fastest land animal",
      "set up a staging environment on fly.io"
    ],
    drift: [
      "can you review PR 482 from Priya, it's the seller onboarding flow",
      { bash: "gh pr diff 482" },
      "leave a comment about the missing validation on IBAN",
      { bash: "gh pr review 482 --comment -b 'IBAN is not validated'" },
      "approve it if the rest is fine"
    ]
  },
  {
    id: "refactor-rename-account",
    kind: "refactor",
    goal: "Rename the customer domain to account across the codebase",
    cwd: "/home/dev/billing-core",
    work: [
      "Customer becomes Account everywhere: classes and packages; api fields stay as customer for now",
      { grep: "class Customer", path: "src" },
      "start with the domain classes",
      { bash: "git mv src/main/kotlin/billing/customer src/main/kotlin/billing/account" }, { edit: "src/main/kotlin/billing/account/Account.kt" },
      "CustomerRepository -> AccountRepository, keep the table name with @Table(name = \"customers\")",
      { edit: "src/main/kotlin/billing/account/AccountRepository.kt" },
      "the json must still say customer_id, add @JsonProperty",
      { edit: "src/main/kotlin/billing/api/InvoiceDto.kt" },
      "./gradlew build",
      { bash: "./gradlew build" },
      "fix the compile errors in the invoice module",
      { edit: "src/main/kotlin/billing/invoice/InvoiceService.kt" },
      "search for 'customer' in log messages and metric names, those too",
      { grep: "customer", path: "src/main" },
      "leave the metrics, dashboards depend on them"
    ],
    off: [
      "how do I grow tomatoes on a balcony",
      "add tax calculation for canada",
      "write a funny out of office message",
      "what's the best way to prepare for a marathon",
      "explain the CAP theorem"
    ],
    drift: [
      "finance asked why invoice INV-2024-0931 has a negative total",
      { bash: "psql billing -c \"select * from invoices where number = 'INV-2024-0931'\"" },
      "a credit note was applied twice",
      "write a query to find other invoices with duplicate credit notes",
      "and a script to fix them"
    ]
  },
  {
    id: "refactor-zustand",
    kind: "refactor",
    goal: "Replace the hand-rolled state management with Zustand",
    cwd: "/home/dev/editor-app",
    work: [
      "our context + reducers setup re-renders everything, let's switch",
      { read: "src/state/store.tsx" },
      "one store with slices: document, selection, ui",
      { write: "src/state/useEditorStore.ts" },
      "selectors with shallow compare for the toolbar",
      { edit: "src/components/Toolbar.tsx" },
      "undo/redo was in the reducer, use the temporal middleware from zundo",
      { bash: "npm i zustand zundo" }, { edit: "src/state/useEditorStore.ts" },
      "migrate the Canvas component",
      { edit: "src/components/Canvas.tsx" },
      "why is Canvas still re-rendering on every mouse move? profile it",
      "the selector returns a new array each time, use useShallow",
      { edit: "src/components/Canvas.tsx" },
      "delete the old store and the provider",
      { bash: "git rm src/state/store.tsx src/state/reducers.ts" },
      "vitest run",
      { bash: "npx vitest run" }
    ],
    off: [
      "what's a good workout split for 4 days a week",
      "add collaborative editing with yjs",
      "write a cover letter for a product designer role",
      "how do I remove a wasp nest safely",
      "recommend podcasts about history"
    ],
    drift: [
      "let's fix the png export, text comes out blurry on retina",
      { read: "src/export/png.ts" },
      "scale by devicePixelRatio",
      { edit: "src/export/png.ts" },
      "and add an option for a transparent background"
    ]
  }
]
