import type { CorpusGoal } from "./corpus.ts"

/** Infrastructure and documentation goals. */
export const operations: ReadonlyArray<CorpusGoal> = [
  {
    id: "infra-ci-speed",
    kind: "infrastructure",
    goal: "Speed up the CI pipeline",
    cwd: "/home/dev/monorepo",
    work: [
      "it takes 25 minutes, where does the time go? here's the timing of the last run",
      { bash: "gh run view 8812 --log | grep -E 'took|elapsed'" },
      "npm ci alone is 6 minutes, cache node_modules keyed on the lockfile",
      { edit: ".github/workflows/ci.yml" },
      "run the jest shards in parallel, 4 shards",
      { edit: ".github/workflows/ci.yml" },
      "the docker build doesn't use layer cache, add buildx with gha cache",
      { edit: ".github/workflows/ci.yml" }, { edit: "Dockerfile" },
      "copy package.json before the source so npm install is cached",
      { edit: "Dockerfile" },
      "only run the e2e job when apps/web changed",
      { edit: ".github/workflows/ci.yml" },
      "push and let's see",
      { bash: "git push" },
      "11 minutes. what's the slowest step now",
      { bash: "gh run view --log" },
      "turbo remote cache for the build step?"
    ],
    off: [
      "what's the best way to cook salmon",
      "add a feature flag system",
      "write a short bio for a conference speaker page",
      "how do I teach my kid to ride a bike",
      "fix the typo on the pricing page"
    ],
    drift: [
      "I need to write my self review for the perf cycle",
      "focus on the launch and mentoring the new hire",
      "make it sound confident but not arrogant",
      "cut it to 300 words"
    ]
  },
  {
    id: "infra-terraform-staging",
    kind: "infrastructure",
    goal: "Set up Terraform for the staging environment",
    cwd: "/home/dev/infra",
    work: [
      "staging was clicked together in the console, let's codify it",
      "start with the vpc: 2 azs, public and private subnets, one nat gateway",
      { write: "envs/staging/vpc.tf" },
      "import the existing vpc instead of creating a new one",
      { bash: "terraform import module.vpc.aws_vpc.this vpc-0a1b2c3d" },
      "now the rds instance, postgres 15, db.t4g.medium, same parameter group as prod",
      { write: "envs/staging/rds.tf" },
      "terraform plan",
      { bash: "terraform plan -out staging.plan" },
      "it wants to replace the db because of the storage_encrypted flag, that's a no",
      { edit: "envs/staging/rds.tf" },
      "remote state in s3 with dynamodb locking",
      { write: "envs/staging/backend.tf" },
      "ecs service for the api with the task definition from the current console config",
      { write: "envs/staging/ecs.tf" },
      "plan again",
      { bash: "terraform plan" }
    ],
    off: [
      "suggest some names for a podcast about parenting",
      "add unit tests to the user service",
      "what's the difference between baking soda and baking powder",
      "write a haiku about the cloud",
      "why is my python script slow when reading a big csv"
    ],
    drift: [
      "the frontend team can't connect to the vpn, can you check the openvpn config",
      { read: "/etc/openvpn/server.conf" },
      "their certs expired yesterday",
      "generate new client certs for the five of them",
      { bash: "./easyrsa build-client-full alice nopass" }
    ]
  },
  {
    id: "infra-checkout-metrics",
    kind: "infrastructure",
    goal: "Add Prometheus metrics and a Grafana dashboard for the checkout service",
    cwd: "/home/dev/checkout",
    work: [
      "expose /metrics with client_golang",
      { edit: "cmd/checkout/main.go" },
      "histogram for request duration by route and status, counter for orders placed",
      { write: "internal/metrics/metrics.go" },
      "use a middleware for all routes, but don't label by raw path, use the route template",
      { edit: "internal/http/router.go" },
      "add the scrape annotation to the k8s deployment",
      { edit: "deploy/k8s/deployment.yaml" },
      "now the dashboard json: rps, error rate, p50/p95/p99, orders per minute",
      { write: "deploy/grafana/checkout.json" },
      "alert when error rate > 2% for 5 minutes",
      { write: "deploy/prometheus/alerts.yaml" },
      "curl localhost:8080/metrics | grep checkout_",
      { bash: "curl -s localhost:8080/metrics | grep checkout_" },
      "the buckets are too coarse below 100ms",
      { edit: "internal/metrics/metrics.go" }
    ],
    off: [
      "help me choose between two job offers",
      "add a discount code field to checkout",
      "what year did the berlin wall fall",
      "write a birthday message for my coworker",
      "how do I center a div"
    ],
    drift: [
      "let's look at the cart abandonment emails, they go out twice",
      { grep: "abandon", path: "internal" }, { read: "internal/cart/reminder.go" },
      "the cron runs on both replicas, add a leader lock",
      { edit: "internal/cart/reminder.go" },
      "write a test for it"
    ]
  },
  {
    id: "infra-containerize",
    kind: "infrastructure",
    goal: "Containerize the legacy inventory app with Docker",
    cwd: "/home/dev/inventory",
    work: [
      "it's a war on tomcat 9 with java 11, write the Dockerfile",
      { read: "pom.xml" },
      "multi-stage: maven build then tomcat:9-jre11 runtime",
      { write: "Dockerfile" },
      "the app reads config from /opt/inventory/conf, mount it as a volume",
      { edit: "Dockerfile" },
      "docker build -t inventory:dev .",
      { bash: "docker build -t inventory:dev ." },
      "the maven stage downloads the internet every time, cache ~/.m2",
      { edit: "Dockerfile" },
      "compose file with mysql 5.7 for local dev",
      { write: "docker-compose.yml" },
      "com.mysql.cj.jdbc.exceptions.CommunicationsException: Communications link failure",
      "wait for mysql to be healthy before starting the app",
      { edit: "docker-compose.yml" },
      "run as non-root user",
      { edit: "Dockerfile" },
      "docker compose up",
      { bash: "docker compose up -d" }
    ],
    off: [
      "what are good exercises for posture",
      "add a barcode scanner to the warehouse screen",
      "explain how vaccines are tested",
      "write an apology email for missing the deadline",
      "convert 72 fahrenheit to celsius"
    ],
    drift: [
      "the warehouse team wants a low stock report emailed daily",
      { write: "src/main/java/com/acme/inventory/reports/LowStockReport.java" },
      "threshold per product from the products table",
      "use the existing mail session",
      { edit: "src/main/webapp/WEB-INF/web.xml" }
    ]
  },
  {
    id: "infra-secrets-manager",
    kind: "infrastructure",
    goal: "Move secrets from .env files to AWS Secrets Manager",
    cwd: "/home/dev/platform-api",
    work: [
      "we have db passwords and api keys in .env on the servers, that has to stop",
      { read: ".env.example" },
      "load them at startup with the aws sdk v3, before the config module is read",
      { write: "src/config/secrets.ts" }, { edit: "src/config/index.ts" },
      "cache for 5 minutes and refresh on rotation",
      { edit: "src/config/secrets.ts" },
      "terraform for the secrets and the iam policy for the ecs task role",
      { write: "infra/secrets.tf" },
      "locally keep using .env, only fetch from aws when NODE_ENV=production",
      { edit: "src/config/index.ts" },
      "enable automatic rotation for the db password with the rds rotation lambda",
      { edit: "infra/secrets.tf" },
      "grep the repo for any other hardcoded keys",
      { bash: "gitleaks detect --source ." },
      "there's a mapbox token in the frontend config, that one's public, leave it",
      "update the runbook",
      { edit: "docs/runbooks/secrets.md" }
    ],
    off: [
      "how do I make a paper airplane that flies far",
      "add request logging with pino",
      "what's a good present for my wife's 40th birthday",
      "write a poem about autumn leaves",
      "why does my react app show a blank page after build"
    ],
    drift: [
      "the product team wants usage analytics, compare posthog and mixpanel for us",
      "we care about self-hosting and gdpr",
      "posthog then. add the snippet to the web app",
      { edit: "web/src/main.tsx" },
      "only load it after cookie consent"
    ]
  },
  {
    id: "infra-worker-autoscaling",
    kind: "infrastructure",
    goal: "Set up autoscaling for the worker pool on Kubernetes",
    cwd: "/home/dev/k8s-config",
    work: [
      "the workers are fixed at 6 replicas, scale them on queue depth",
      "keda with the rabbitmq scaler, or hpa with custom metrics?",
      "keda. install it with helm",
      { bash: "helm install keda kedacore/keda --namespace keda --create-namespace" },
      "ScaledObject for the workers deployment, 2 to 40 replicas, target 100 messages per pod",
      { write: "apps/workers/scaledobject.yaml" },
      "the trigger auth needs the rabbitmq connection string from the secret",
      { write: "apps/workers/triggerauth.yaml" },
      "kubectl apply -k apps/workers",
      { bash: "kubectl apply -k apps/workers" },
      "scale down is too aggressive, add a cooldown of 5 minutes",
      { edit: "apps/workers/scaledobject.yaml" },
      "workers get SIGTERM mid-job when it scales down, give them a terminationGracePeriod of 120s",
      { edit: "apps/workers/deployment.yaml" },
      "publish 10k messages and watch the replicas",
      { bash: "kubectl get hpa -n workers -w" },
      "the cluster needs to add nodes too, check the node group max"
    ],
    off: [
      "what's the best way to get rid of fruit flies",
      "add dark mode to the admin ui",
      "write a toast for my parents' anniversary",
      "how do I get better at chess",
      "add a new column to the users table for timezone"
    ],
    drift: [
      "someone needs access to the prod namespace, create a read-only role for the data team",
      { write: "rbac/data-team-readonly.yaml" },
      "bind it to their google group",
      { bash: "kubectl apply -f rbac/data-team-readonly.yaml" },
      "can they exec into pods with that? they shouldn't"
    ]
  }
]
