import type { CorpusGoal } from "./corpus.ts"

/** Documentation goals: the work is pages, examples and the checks around them. */
export const docs: ReadonlyArray<CorpusGoal> = [
  {
    id: "docs-webhooks-reference",
    kind: "docs",
    goal: "Write the API reference docs for the v2 webhooks",
    cwd: "/home/dev/developer-docs",
    work: [
      "we need a page per event type of the new version",
      { read: "openapi/v2/webhooks.yaml" },
      "one page per event with a payload example and a field table",
      { write: "docs/webhooks/v2/order.created.md" },
      "generate the field tables from the openapi schemas instead of writing them by hand",
      { write: "scripts/gen-webhook-tables.ts" }, { bash: "npx tsx scripts/gen-webhook-tables.ts" },
      "a section on verifying signatures with examples in node, python and go",
      { write: "docs/webhooks/v2/verifying-signatures.md" },
      "the python example uses hmac.compare_digest right?",
      "retry schedule table: 30s, 5m, 30m, 2h",
      { edit: "docs/webhooks/v2/index.md" },
      "migration notes from v1: renamed fields and the new envelope",
      { write: "docs/webhooks/v2/migrating-from-v1.md" },
      "npm run docs:build and check for broken links",
      { bash: "npm run docs:build && npm run docs:links" },
      "fix the 3 broken anchors",
      { edit: "docs/webhooks/v2/index.md" }
    ],
    off: [
      "what's a good name for a goldfish",
      "fix the login redirect loop on the dashboard",
      "how do I make pancakes fluffy",
      "write a tweet announcing our new office in berlin",
      "explain how dns works"
    ],
    drift: [
      "can you help me prep the slides for friday's all hands",
      "5 slides: wins, metrics, hiring, roadmap, q&a",
      "metrics slide: signups up 30%, churn down to 2.1%",
      "make the roadmap slide more visual"
    ]
  },
  {
    id: "docs-getting-started",
    kind: "docs",
    goal: "Document the local development setup for new engineers",
    cwd: "/home/dev/platform",
    work: [
      "new hires take 2 days to get the stack running, write a proper getting started guide",
      { read: "README.md" }, { read: "docker-compose.yml" },
      "prerequisites section: docker, node 20 via fnm, pnpm, the aws cli with sso",
      { write: "docs/getting-started.md" },
      "how do they get the seed data? there's scripts/seed.sh right",
      { read: "scripts/seed.sh" },
      "list the env vars they actually need, the .env.example has 60",
      { read: ".env.example" },
      "add troubleshooting: port 5432 already in use, m1 docker images, sso token expired",
      { edit: "docs/getting-started.md" },
      "follow the guide yourself in a clean container and tell me where it breaks",
      { bash: "docker run --rm -v $PWD:/src node:20 bash -c 'cd /src && pnpm install'" },
      "add a diagram of the services with mermaid",
      { edit: "docs/getting-started.md" },
      "link it from the README",
      { edit: "README.md" }
    ],
    off: [
      "what should I do this weekend in amsterdam",
      "add a health check endpoint to the notifications service",
      "help me write a birthday card for my mom",
      "what's the difference between a virus and bacteria",
      "optimize the slow query on the reports page"
    ],
    drift: [
      "the staging deploy failed, can you look at the logs",
      { bash: "gh run view 9921 --log-failed" },
      "helm upgrade timed out, the migration job is stuck",
      { bash: "kubectl logs job/migrate -n staging" },
      "lock wait timeout, kill the blocking query"
    ]
  },
  {
    id: "docs-adr-kafka",
    kind: "docs",
    goal: "Write an ADR for choosing Kafka over RabbitMQ",
    cwd: "/home/dev/architecture",
    work: [
      "draft the decision record for the event bus choice",
      { read: "adr/template.md" },
      "context: 40k events/s at peak, replay needed for new consumers, ordering per customer",
      { write: "adr/0017-event-bus-kafka.md" },
      "considered options: rabbitmq streams, nats jetstream, kinesis",
      "why not rabbitmq streams? it has replay now",
      { edit: "adr/0017-event-bus-kafka.md" },
      "consequences: we need to run a cluster or pay for confluent, the team has no experience with it",
      { edit: "adr/0017-event-bus-kafka.md" },
      "add a cost comparison table, msk vs confluent cloud at our volume",
      "tighten the wording, it reads like a sales pitch",
      { edit: "adr/0017-event-bus-kafka.md" },
      "status proposed, deciders: me, ana, tom",
      "add it to the index",
      { edit: "adr/README.md" }
    ],
    off: [
      "what's a good dinner for someone with a gluten allergy",
      "set up the kafka topic for payments in terraform",
      "how do noise cancelling headphones work",
      "write a limerick about a database",
      "review my python code for the fizzbuzz interview question"
    ],
    drift: [
      "switching: I need to estimate the move of the reporting db to bigquery for the roadmap",
      "rough tshirt sizes per step",
      "what are the risks",
      "put it in a table"
    ]
  },
  {
    id: "docs-sdk-v2",
    kind: "docs",
    goal: "Update the README and examples for the 2.0 release of the SDK",
    cwd: "/home/dev/sdk-js",
    work: [
      "2.0 renames createClient to new Client and drops callbacks",
      { read: "README.md" }, { edit: "README.md" },
      "all the files in examples/ still use 1.x, port them",
      { edit: "examples/basic.js" }, { edit: "examples/pagination.js" },
      "run each one against the sandbox to make sure they work",
      { bash: "for f in examples/*.js; do node $f; done" },
      "pagination.js fails: TypeError: client.list is not a function",
      "it's client.items.list now",
      { edit: "examples/pagination.js" },
      "write the upgrade guide from 1.x with a before/after table",
      { write: "docs/upgrading-to-2.md" },
      "typedoc comments on the public methods are outdated too",
      { edit: "src/client.ts" },
      "npm run docs",
      { bash: "npm run docs" },
      "changelog entry for 2.0.0 with the breaking changes first",
      { edit: "CHANGELOG.md" }
    ],
    off: [
      "give me ideas for a 10 year anniversary",
      "add retry with exponential backoff to the http client",
      "what is the population of canada",
      "write a short poem about rain",
      "how do I stop procrastinating"
    ],
    drift: [
      "let's investigate the bundle size issue from github #311",
      { bash: "gh issue view 311" },
      "the esm build includes the whole lodash",
      { edit: "src/utils.ts" },
      "use per-function lodash-es imports",
      { bash: "npm run build && npx size-limit" }
    ]
  }
]
