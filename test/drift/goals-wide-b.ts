import type { CorpusGoal } from "./corpus.ts"

/**
 * Development material written after the second fresh set, in common stacks, to place the
 * detector's thresholds on more work than the first development set.
 */
export const wideB: ReadonlyArray<CorpusGoal> = [
  {
    id: "wide-angular-async-validator",
    kind: "bug",
    goal: "Fix the signup form's async username validator in the Angular app",
    cwd: "/home/dev/member-portal",
    work: [
      "the 'username taken' error on the signup page never clears, even after I type a free name. and the submit button stays disabled forever",
      { grep: "usernameTaken", path: "src/app" },
      { read: "src/app/auth/signup/signup.component.ts" },
      { read: "src/app/auth/validators/username-available.validator.ts" },
      "the validator returns this.http.get(...).pipe(map(...)) but never completes when the debounce is inside, so the control sits in PENDING. why is the debounceTime on valueChanges in there?",
      "use timer(400).pipe(switchMap(...)) inside the AsyncValidatorFn so each keystroke cancels the previous call, and take(1)",
      { edit: "src/app/auth/validators/username-available.validator.ts" },
      "also catchError -> of(null), if the check endpoint 500s we shouldn't block signup",
      { edit: "src/app/auth/validators/username-available.validator.ts" },
      "it's still firing on every keystroke in the network tab. the FormControl should be updateOn: 'blur'? no, keep change but check how it's registered",
      { read: "src/app/auth/signup/signup.component.ts" },
      "it's passed as the third arg of the sync validators array, move it to asyncValidators",
      { edit: "src/app/auth/signup/signup.component.ts" },
      "the template shows the error with *ngIf=\"form.get('username').errors\", show a spinner while status === 'PENDING' instead of the old error",
      { edit: "src/app/auth/signup/signup.component.html" },
      "spec with fakeAsync and tick(400), HttpTestingController for the check call",
      { write: "src/app/auth/validators/username-available.validator.spec.ts" },
      "ng test",
      { bash: "npx ng test --watch=false --include src/app/auth" },
      "Expected 'PENDING' to equal 'VALID'. at src/app/auth/validators/username-available.validator.spec.ts:41:38",
      "forgot to flush the request before the tick, fix the spec",
      { edit: "src/app/auth/validators/username-available.validator.spec.ts" },
      { bash: "npx ng test --watch=false --include src/app/auth" }
    ],
    off: [
      "add a password strength meter under the password field on signup",
      "the profile edit form doesn't mark itself dirty when you change the avatar",
      "upgrade us from Angular 16 to 17, what breaks with the new control flow?",
      "should we move the auth state to NgRx signals store?",
      "how long should I boil an egg for a runny yolk"
    ],
    drift: [
      "btw the login page redirects to /dashboard even when there's a returnUrl",
      { read: "src/app/auth/login/login.component.ts" },
      "read returnUrl from the ActivatedRoute snapshot and navigateByUrl to it after login",
      { edit: "src/app/auth/login/login.component.ts" },
      "and the auth guard should put the url in there when it bounces you",
      { edit: "src/app/auth/guards/auth.guard.ts" }
    ]
  },
  {
    id: "wide-graphql-order-subscription",
    kind: "feature",
    goal: "Add a GraphQL subscription for order status changes to the Apollo server",
    cwd: "/home/dev/shop-graphql",
    work: [
      "the storefront polls order(id) every 5s to show 'packed / shipped / delivered'. I want them to subscribe instead. what does our apollo setup look like, is it v4 with express?",
      { read: "src/server.ts" },
      { read: "package.json" },
      "ok apollo server 4 + expressMiddleware. wire up graphql-ws on the same http server with useServer and the drain plugin",
      { bash: "npm install graphql-ws ws graphql-subscriptions" },
      { edit: "src/server.ts" },
      "schema: type Subscription { orderStatusChanged(orderId: ID!): OrderStatusEvent! } with status, changedAt, trackingUrl",
      { edit: "src/schema/order.graphql" },
      "resolver with withFilter so you only get events for your orderId, pubsub in src/pubsub.ts",
      { write: "src/pubsub.ts" },
      { edit: "src/resolvers/order.ts" },
      "where does the status actually change? publish from there",
      { grep: "status:", path: "src/services" },
      { read: "src/services/fulfillment.ts" },
      { edit: "src/services/fulfillment.ts" },
      "the ws connection has no auth. read the token from connectionParams in the context fn and reject if the order isn't the user's",
      { edit: "src/server.ts" },
      { edit: "src/resolvers/order.ts" },
      "we run 3 pods, in-memory PubSub won't cut it. swap for graphql-redis-subscriptions with the redis we already have",
      { bash: "npm install graphql-redis-subscriptions ioredis" },
      { edit: "src/pubsub.ts" },
      "codegen then tsc",
      { bash: "npm run codegen && npx tsc --noEmit" },
      "integration test: subscribe with a graphql-ws client, mark the order shipped, expect the event",
      { write: "test/order-subscription.test.ts" },
      { bash: "npm test -- order-subscription" }
    ],
    off: [
      "add a cancelOrder mutation that only works before the order is packed",
      "the orders query is slow for customers with 500+ orders, add cursor pagination",
      "set up persisted queries so the mobile app stops sending the full query text",
      "what's the difference between SSE and websockets for this kind of thing in general?",
      "is it worth getting a standing desk"
    ],
    drift: [
      "unrelated, the product resolver hits the db once per line item, can you add a DataLoader",
      { read: "src/resolvers/product.ts" },
      { write: "src/loaders/productLoader.ts" },
      "create the loaders per request in the context",
      { edit: "src/server.ts" },
      "and the same for the inventory lookup on Product.stock",
      { edit: "src/resolvers/product.ts" }
    ]
  },
  {
    id: "wide-vue-webpack-to-vite",
    kind: "migration",
    goal: "Migrate the Vue admin dashboard's build from webpack (vue-cli) to Vite",
    cwd: "/home/dev/admin-dashboard",
    work: [
      "vue-cli-service serve takes 90s to start and hot reload is 6-8s. we're on vue 3 already, let's move to vite. what's in vue.config.js that we need to carry over?",
      { read: "vue.config.js" },
      { read: "package.json" },
      "add vite and @vitejs/plugin-vue, write a vite.config.ts with the @ alias and the /api proxy to localhost:8080",
      { bash: "npm install -D vite @vitejs/plugin-vue" },
      { write: "vite.config.ts" },
      "move public/index.html to the root and add <script type=\"module\" src=\"/src/main.ts\">, drop the <%= BASE_URL %> stuff",
      { bash: "git mv public/index.html index.html" },
      { edit: "index.html" },
      "process.env.VUE_APP_* is everywhere",
      { grep: "process.env.VUE_APP_", path: "src" },
      "rename them to VITE_ in the .env files and use import.meta.env, add the types in env.d.ts",
      { bash: "sed -i 's/^VUE_APP_/VITE_/' .env .env.staging .env.production" },
      { bash: "grep -rl 'process.env.VUE_APP_' src | xargs sed -i 's/process\\.env\\.VUE_APP_/import.meta.env.VITE_/g'" },
      { write: "src/env.d.ts" },
      "npm run dev",
      { bash: "npx vite" },
      "[plugin:vite:import-analysis] Failed to resolve import \"./components/ReportTable\" from \"src/views/Reports.vue\". Does the file exist?",
      "webpack resolved .vue without the extension. either add '.vue' to resolve.extensions or fix the imports, fix the imports",
      { bash: "grep -rln \"from '\\./components/[A-Za-z]*'\" src" },
      { edit: "src/views/Reports.vue" },
      "require.context in src/plugins/icons.ts doesn't exist in vite, use import.meta.glob with eager",
      { edit: "src/plugins/icons.ts" },
      "build for staging and compare the bundle size to the old dist",
      { bash: "npx vite build --mode staging && du -sh dist" },
      "looks fine. remove @vue/cli-service, babel.config.js and vue.config.js, point the scripts at vite",
      { bash: "npm uninstall @vue/cli-service @vue/cli-plugin-babel @vue/cli-plugin-typescript && git rm babel.config.js vue.config.js" },
      { edit: "package.json" }
    ],
    off: [
      "replace jest with vitest for the unit tests",
      "move the store from vuex to pinia",
      "the date pickers on the reports page show UTC instead of local time",
      "is the composition API always better than options API?",
      "recommend a good sci-fi book, I liked Project Hail Mary"
    ],
    drift: [
      "the sidebar doesn't remember if it was collapsed after a reload",
      { read: "src/components/AppSidebar.vue" },
      "keep it in localStorage, key 'sidebar-collapsed'",
      { edit: "src/components/AppSidebar.vue" },
      "also on mobile it should start collapsed",
      { edit: "src/components/AppSidebar.vue" }
    ]
  },
  {
    id: "wide-gha-python-matrix",
    kind: "infrastructure",
    goal: "Set up a GitHub Actions test matrix for the library across Python 3.9 to 3.13",
    cwd: "/home/dev/tabular-io",
    work: [
      "CI is still the old travis file that nobody looks at. we claim 3.9+ in pyproject, I want every PR tested on 3.9 through 3.13, ubuntu plus one macos and windows job",
      { read: "pyproject.toml" },
      { read: ".travis.yml" },
      "write .github/workflows/tests.yml, setup-python with pip cache, install .[test], pytest with coverage",
      { write: ".github/workflows/tests.yml" },
      "don't do the full OS x python product, include only 3.9 and 3.13 on macos-latest and windows-latest",
      { edit: ".github/workflows/tests.yml" },
      "fail-fast false, and cancel in-progress runs on the same branch",
      { edit: ".github/workflows/tests.yml" },
      "try it locally with act",
      { bash: "act pull_request -j test --matrix python-version:3.13" },
      "ERROR: Could not find a version that satisfies the requirement numpy==1.24.4 (from tabular-io[test]) (from versions: 1.26.0, 1.26.1, 2.0.0, 2.1.0)",
      "the test extra pins numpy for 3.9, make it a marker: numpy<2 on python<3.10, >=1.26 otherwise",
      { edit: "pyproject.toml" },
      "windows job: UnicodeDecodeError: 'charmap' codec can't decode byte 0x9d in position 412 in tests/test_csv_reader.py\nthe fixture opens the file without encoding. just set PYTHONUTF8=1 in the job env for now",
      { edit: ".github/workflows/tests.yml" },
      "upload coverage from the ubuntu 3.12 job only, and a badge in the readme",
      { edit: ".github/workflows/tests.yml" },
      { edit: "README.md" },
      "push the branch and watch it",
      { bash: "git push -u origin ci/gha-matrix && gh run watch" },
      "all 9 green, delete .travis.yml",
      { bash: "git rm .travis.yml && git commit -m 'Test on GitHub Actions across Python 3.9-3.13'" }
    ],
    off: [
      "set up trusted publishing to PyPI when we tag a release",
      "read_csv drops the last row when the file has no trailing newline",
      "add a dependabot config for the pip dependencies",
      "should we switch from setuptools to hatchling?",
      "what's a good way to learn touch typing"
    ],
    drift: [
      "while I'm here, the docs build on readthedocs has been failing for a week",
      { read: ".readthedocs.yaml" },
      "sphinx-autodoc can't import the package, it needs the install step. add python.install with the docs extra",
      { edit: ".readthedocs.yaml" },
      "and pin sphinx<8 in the docs extra, the theme isn't compatible yet",
      { edit: "pyproject.toml" },
      { bash: "sphinx-build -W docs docs/_build/html" }
    ]
  }
]
