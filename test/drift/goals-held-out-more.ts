import type { CorpusGoal } from "./corpus.ts"

/** More held-out goals (see goals-held-out.ts). */
export const moreHeldOut: ReadonlyArray<CorpusGoal> = [
  {
    id: "held-drop-jquery",
    kind: "refactor",
    goal: "Remove the jQuery dependency from the admin pages",
    cwd: "/home/dev/cms",
    work: [
      "we still ship it just for the admin, rewrite those bits in plain js",
      { grep: "\\$\\(", path: "admin/js" },
      "start with admin/js/users.js, it only uses $.ajax and a few selectors",
      { read: "admin/js/users.js" }, { edit: "admin/js/users.js" },
      "replace $.ajax with fetch and keep the csrf header",
      { edit: "admin/js/users.js" },
      "the datepicker plugin depends on it, what can replace it",
      "native input type=date is fine for admins",
      { edit: "admin/templates/posts/edit.html" },
      "do the same for media.js and settings.js",
      { edit: "admin/js/media.js" }, { edit: "admin/js/settings.js" },
      "grep again, anything left?",
      { grep: "jQuery|\\$\\(", path: "admin" },
      "remove the script tag from the admin layout and the npm package",
      { edit: "admin/templates/layout.html" }, { bash: "npm uninstall jquery" },
      "click through the admin in playwright to check nothing broke",
      { bash: "npx playwright test admin" }
    ],
    off: [
      "what's a good chili recipe",
      "add scheduled publishing for posts",
      "explain how https certificates work",
      "write a funny slack status",
      "how do I fix a squeaky door"
    ],
    drift: [
      "the rss feed has broken links since the url change",
      { read: "cms/feeds/rss.py" },
      "build the links from the canonical url setting",
      { edit: "cms/feeds/rss.py" },
      "validate it with the w3c feed validator"
    ]
  },
  {
    id: "held-db-backups",
    kind: "infrastructure",
    goal: "Set up nightly database backups to S3 with 30-day retention",
    cwd: "/home/dev/ops",
    work: [
      "we have nothing besides rds snapshots, add logical dumps of the main postgres every night",
      "a k8s cronjob running pg_dump at 02:00",
      { write: "k8s/backup/cronjob.yaml" },
      "compress with zstd and upload with the aws cli",
      { write: "k8s/backup/backup.sh" },
      "the bucket needs a lifecycle rule to expire after 30 days",
      { write: "terraform/backups.tf" },
      "encrypt with the kms key we use for the app",
      { edit: "terraform/backups.tf" },
      "terraform apply",
      { bash: "terraform -chdir=terraform apply" },
      "trigger the job once manually",
      { bash: "kubectl create job --from=cronjob/pg-backup pg-backup-manual -n ops" },
      "check the logs",
      { bash: "kubectl logs job/pg-backup-manual -n ops" },
      "now a restore script and test it against a scratch database",
      { write: "k8s/backup/restore.sh" },
      "alert if no new dump shows up for 26 hours"
    ],
    off: [
      "what's a good present for a 3 year old",
      "add a search bar to the internal wiki",
      "how do solar panels work",
      "write a congratulations card for a new baby",
      "fix the typo in the footer"
    ],
    drift: [
      "the staging cluster is out of disk, can you see what's eating it",
      { bash: "kubectl get pvc -A" },
      "the elasticsearch logs index is 180gb",
      "add an ilm policy to roll over daily and delete after 7 days",
      { write: "k8s/logging/ilm-policy.json" }
    ]
  },
  {
    id: "held-api-cdn",
    kind: "infrastructure",
    goal: "Put the API behind a CDN and cache the public endpoints",
    cwd: "/home/dev/api-gateway",
    work: [
      "put cloudfront in front of the api, only the public GETs should be cached",
      { write: "infra/cdn.tf" },
      "cache behavior for /v1/catalog/* with a 5 minute ttl, everything else passes through",
      { edit: "infra/cdn.tf" },
      "the api needs to send Cache-Control: public, max-age=300 on those routes",
      { edit: "src/routes/catalog.ts" },
      "forward the Authorization header for non-catalog paths, and don't cache them",
      { edit: "infra/cdn.tf" },
      "terraform plan",
      { bash: "terraform plan" },
      "add an invalidation step to the deploy job when catalog data changes",
      { edit: ".github/workflows/deploy.yml" },
      "curl -I https://api-staging.example.com/v1/catalog/items and check the x-cache header",
      { bash: "curl -I https://api-staging.example.com/v1/catalog/items" },
      "Miss from cloudfront twice in a row, why not a hit?",
      "the Vary header includes Cookie, drop it for catalog",
      { edit: "src/routes/catalog.ts" }
    ],
    off: [
      "how do I make my lawn greener",
      "add an endpoint for bulk price updates",
      "what's the plot of the great gatsby",
      "write a limerick about kubernetes",
      "how long should I steep green tea"
    ],
    drift: [
      "sales needs an api key for a partner with a higher quota",
      { bash: "node scripts/create-key.js --partner acme --quota 10000" },
      "send them the onboarding docs link too",
      "and put it in the partner spreadsheet"
    ]
  },
  {
    id: "held-cli-troubleshooting",
    kind: "docs",
    goal: "Write a troubleshooting guide for the CLI",
    cwd: "/home/dev/cli-docs",
    work: [
      "collect the top support tickets about the cli and turn them into a page",
      { read: "support/top-tickets.csv" },
      "sections: install fails, login loops, proxy errors, slow commands",
      { write: "docs/cli/troubleshooting.md" },
      "for install, cover npm EACCES and the homebrew tap",
      "the login loop is the keychain on linux, explain the --no-keyring flag",
      { edit: "docs/cli/troubleshooting.md" },
      "proxy: HTTPS_PROXY, custom CA with NODE_EXTRA_CA_CERTS",
      { edit: "docs/cli/troubleshooting.md" },
      "add the output of `acme doctor` as an example",
      { bash: "acme doctor" },
      "link each error message so people find it when they search the text",
      "add it to the sidebar under CLI",
      { edit: "docs/sidebar.json" },
      "run the docs linter",
      { bash: "npm run lint:docs" }
    ],
    off: [
      "what's a good houseplant for a bathroom",
      "add a --quiet flag to the cli",
      "how does a bloom filter work",
      "write a short bio for my linkedin",
      "how do I stop my dog from pulling on the leash"
    ],
    drift: [
      "can you help me plan the docs team offsite agenda",
      "two days, mix of workshops and fun",
      "add a dinner option near the office",
      "make it a table"
    ]
  },
  {
    id: "held-structured-logs",
    kind: "refactor",
    goal: "Switch the notifications service to structured JSON logs",
    cwd: "/home/dev/notifications-svc",
    work: [
      "we log with console.log and string concatenation, move everything to pino",
      { bash: "npm i pino pino-http" },
      "a logger module that other files import, level from LOG_LEVEL",
      { write: "src/logger.ts" },
      "replace console.log calls in src/",
      { grep: "console\\.(log|error|warn)", path: "src" }, { edit: "src/send.ts" }, { edit: "src/queue.ts" },
      "include the request id in every line with a child logger",
      { edit: "src/server.ts" },
      "redact the email and phone fields",
      { edit: "src/logger.ts" },
      "pretty print in dev only",
      "npm run dev and show me a few lines",
      { bash: "npm run dev" },
      "the error logs lost the stack, pass the error as { err }",
      { edit: "src/send.ts" },
      "update the datadog pipeline to parse the new format"
    ],
    off: [
      "what's the best way to store tomatoes",
      "add sms fallback when push fails",
      "explain what a monorepo is",
      "write a bedtime story about a brave turtle",
      "how do I fix a slow wifi connection"
    ],
    drift: [
      "push notifications to android stopped working this morning",
      { bash: "kubectl logs deploy/notifications -n prod | grep fcm | tail -50" },
      "the fcm server key was deprecated, switch to the http v1 api with a service account",
      { edit: "src/providers/fcm.ts" },
      "deploy the fix"
    ]
  }
]
