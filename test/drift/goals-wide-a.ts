import type { CorpusGoal } from "./corpus.ts"

/**
 * Development material written after the second fresh set, in common stacks, to place the
 * detector's thresholds on more work than the first development set.
 */
export const wideA: ReadonlyArray<CorpusGoal> = [
  {
    id: "wide-nextjs-slow-server-components",
    kind: "bug",
    goal: "Fix the slow product page in the Next.js app router",
    cwd: "/home/dev/storefront-web",
    work: [
      "/products/[slug] takes 4-5s TTFB in prod, locally too with next start. where does the page fetch its data?",
      { read: "app/products/[slug]/page.tsx" },
      { grep: "async function", path: "app/products/[slug]" },
      "so page awaits getProduct, then <Reviews> awaits getReviews, then <Related> awaits getRelated, one after another. it's a waterfall",
      "kick off all three at the top and pass the promises down, or at least Promise.all the product and related",
      { edit: "app/products/[slug]/page.tsx" },
      { read: "lib/api/catalog.ts" },
      "every fetch there has cache: 'no-store', that's why nothing is cached. product data can be revalidate: 300 with a tag per slug",
      { edit: "lib/api/catalog.ts" },
      "wrap Reviews in a Suspense with the skeleton so the top of the page streams first",
      { edit: "app/products/[slug]/page.tsx" },
      { write: "app/products/[slug]/loading.tsx" },
      "Error: Route /products/[slug] used `cookies()` inside a function cached with \"unstable_cache\". Accessing Dynamic data sources inside a cache scope is not supported.",
      "getRelated reads the currency cookie inside the cached fn. read it in the page and pass it as an argument",
      { edit: "lib/api/catalog.ts" },
      { edit: "app/products/[slug]/page.tsx" },
      "build it and check the route is ISR now",
      { bash: "npm run build" },
      "good, ● (ISR) now. hit it with autocannon against next start",
      { bash: "npx next start -p 3001 & sleep 3 && npx autocannon -c 10 -d 15 http://localhost:3001/products/linen-shirt" },
      "commit",
      { bash: "git commit -am 'Parallelise and cache product page data fetching'" }
    ],
    off: [
      "add a 'recently viewed' strip to the product page that uses localStorage",
      "the checkout page throws a hydration mismatch on the price formatting",
      "move us from pages/api/webhooks to route handlers",
      "set up next-intl so we can ship the German storefront",
      "what's a good stretch for lower back pain after sitting all day"
    ],
    drift: [
      "btw the sitemap.xml is missing all the category pages",
      { read: "app/sitemap.ts" },
      "fetch the categories too and add them with changeFrequency weekly",
      { edit: "app/sitemap.ts" },
      "and robots.ts should point at the sitemap on the canonical host, not the vercel preview url",
      { edit: "app/robots.ts" }
    ]
  },
  {
    id: "wide-fastapi-oauth-scopes",
    kind: "feature",
    goal: "Add OAuth scopes to the FastAPI invoices endpoints",
    cwd: "/home/dev/billing-api",
    work: [
      "right now any valid token can hit every /invoices route. I want invoices:read and invoices:write scopes. how is auth wired up at the moment?",
      { read: "app/auth/dependencies.py" },
      { grep: "get_current_user", path: "app/routers" },
      "switch the OAuth2PasswordBearer to declare the scopes and have get_current_user take SecurityScopes, check them against the 'scope' claim in the JWT",
      { edit: "app/auth/dependencies.py" },
      "GET routes need Security(get_current_user, scopes=['invoices:read']), POST/PATCH/DELETE need invoices:write",
      { read: "app/routers/invoices.py" },
      { edit: "app/routers/invoices.py" },
      "the token endpoint should only grant what the client's allowed, the allowed scopes are on the api_clients table",
      { read: "app/routers/token.py" },
      { edit: "app/routers/token.py" },
      "return 403 not 401 when the token is fine but the scope is missing, with WWW-Authenticate: Bearer scope=\"...\"",
      { edit: "app/auth/dependencies.py" },
      "pytest tests/test_invoices.py",
      { bash: "pytest tests/test_invoices.py -q" },
      "FAILED tests/test_invoices.py::test_list_invoices - assert 403 == 200\nE  +  where 403 = <Response [403 Forbidden]>.status_code",
      "the test fixture mints tokens without a scope claim. give the fixture a scopes param, default both",
      { edit: "tests/conftest.py" },
      "and add tests for read-only token trying to POST, and for a client asking for a scope it isn't allowed",
      { edit: "tests/test_invoices.py" },
      { bash: "pytest -q" },
      "does /docs show the scopes in the Authorize dialog now?",
      { bash: "uvicorn app.main:app --reload" }
    ],
    off: [
      "add pagination to GET /customers, cursor based",
      "the pdf rendering for invoices cuts off the last line item",
      "move the JWT signing from HS256 to RS256 with a JWKS endpoint",
      "pydantic v2 says `orm_mode` has been renamed, what's the new name?",
      "recommend a sci-fi book that isn't too long"
    ],
    drift: [
      "btw the stripe webhook handler logs the full payload including card fingerprints, strip that",
      { read: "app/routers/webhooks.py" },
      { edit: "app/routers/webhooks.py" },
      "also verify the Stripe-Signature header, we're just trusting the body right now",
      { edit: "app/routers/webhooks.py" },
      "test with stripe listen --forward-to",
      { bash: "stripe listen --forward-to localhost:8000/webhooks/stripe" }
    ]
  },
  {
    id: "wide-rails-7-upgrade",
    kind: "migration",
    goal: "Upgrade the app from Rails 6.1 to 7.1",
    cwd: "/home/dev/helpdesk",
    work: [
      "bump rails in the Gemfile to ~> 7.0 first, we'll go to 7.1 after that's green",
      { edit: "Gemfile" },
      { bash: "bundle update rails" },
      "Bundler could not find compatible versions for gem \"activesupport\":\n  In Gemfile:\n    paper_trail (~> 11.1) was resolved to 11.1.0, which depends on\n      activesupport (>= 5.2, < 6.2)",
      "bump paper_trail to 15 then, check its changelog for breaking stuff",
      { edit: "Gemfile" },
      { bash: "bundle update rails paper_trail" },
      "run app:update but don't let it overwrite our config, I'll go through the diffs",
      { bash: "bin/rails app:update" },
      { read: "config/initializers/new_framework_defaults_7_0.rb" },
      "leave the cache_format_version and the sha256 key generator commented for now, those need a rollout. enable the rest",
      { edit: "config/initializers/new_framework_defaults_7_0.rb" },
      "we're on webpacker still. do we have to move to jsbundling or can it keep working on 7?",
      { read: "config/webpacker.yml" },
      "ok keep webpacker for this PR. run the suite",
      { bash: "bundle exec rspec" },
      "NoMethodError: undefined method `update_attributes' for #<Ticket id: 12 ...>\n# ./app/services/tickets/escalate.rb:18:in `call'",
      "replace all update_attributes with update",
      { grep: "update_attributes", path: "app" },
      { bash: "grep -rl 'update_attributes' app lib | xargs sed -i 's/update_attributes/update/g'" },
      { bash: "bundle exec rspec" },
      "green on 7.0. now 7.1, same thing, and load_defaults 7.0 in application.rb",
      { edit: "config/application.rb" },
      { edit: "Gemfile" },
      { bash: "bundle update rails && bin/rails app:update" }
    ],
    off: [
      "add a 'merge tickets' action for agents",
      "the SLA breach emails go to the wrong agent when a ticket is reassigned",
      "move background jobs from sidekiq to solid_queue",
      "what's the difference between has_many through and has_and_belongs_to_many",
      "how much should I tip for a haircut in the US"
    ],
    drift: [
      "while I'm here, the tickets index is doing an N+1 on requester and assignee",
      { read: "app/controllers/tickets_controller.rb" },
      "includes(:requester, :assignee) and turn on strict_loading in dev so we catch the next one",
      { edit: "app/controllers/tickets_controller.rb" },
      { edit: "config/environments/development.rb" },
      "also add an index on tickets(status, updated_at), the filter is slow",
      { bash: "bin/rails g migration AddStatusUpdatedAtIndexToTickets" }
    ]
  },
  {
    id: "wide-express-to-fastify",
    kind: "migration",
    goal: "Migrate the notifications service from Express to Fastify",
    cwd: "/home/dev/notifications-service",
    work: [
      "start with the server bootstrap. what middleware do we have in src/app.ts?",
      { read: "src/app.ts" },
      "helmet, cors, express.json, the request-id thing and our error handler. use @fastify/helmet, @fastify/cors, drop the body parser since fastify parses json itself",
      { bash: "npm i fastify @fastify/helmet @fastify/cors && npm rm express body-parser @types/express" },
      { write: "src/server.ts" },
      "the routes are express Routers, turn each file into a fastify plugin. do src/routes/subscriptions.ts first",
      { read: "src/routes/subscriptions.ts" },
      { edit: "src/routes/subscriptions.ts" },
      "put the joi validation into JSON schemas on the route so fastify validates it",
      { edit: "src/routes/subscriptions.ts" },
      "ok same for templates.ts and send.ts",
      { edit: "src/routes/templates.ts" },
      { edit: "src/routes/send.ts" },
      "request id: use genReqId reading x-request-id, and the pino logger fastify has instead of our wrapper",
      { edit: "src/server.ts" },
      "error handler -> setErrorHandler, keep the same { error: { code, message } } shape",
      { edit: "src/server.ts" },
      "npm test",
      { bash: "npm test" },
      "FST_ERR_CTP_EMPTY_JSON_BODY: Body cannot be empty when content-type is set to 'application/json'\n    at Parser.defaultJsonParser (node_modules/fastify/lib/contentTypeParser.js:240:14)",
      "the DELETE calls from the admin ui send content-type with no body. just tolerate an empty body there",
      { edit: "src/server.ts" },
      "supertest calls app.listen, switch the tests to fastify.inject",
      { grep: "supertest", path: "test" },
      { edit: "test/helpers/app.ts" },
      { bash: "npm test" }
    ],
    off: [
      "add a digest mode so users can get one email a day instead of each notification",
      "the APNs provider token expires and pushes silently fail after an hour",
      "move the service from CommonJS to ESM",
      "what's the difference between process.nextTick and setImmediate",
      "what's a good name for a grey cat"
    ],
    drift: [
      "btw the dockerfile is still on node 16, bump it to 20 and make it multi-stage",
      { read: "Dockerfile" },
      { edit: "Dockerfile" },
      "and run as the node user not root",
      { edit: "Dockerfile" },
      { bash: "docker build -t notifications-service:dev ." },
      "the image is 900MB, use the slim base and npm ci --omit=dev in the final stage"
    ]
  }
]
