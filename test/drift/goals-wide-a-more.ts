import type { CorpusGoal } from "./corpus.ts"

/** More of the wide set (goals-wide-a.ts says how it was written and used). */
export const wideAMore: ReadonlyArray<CorpusGoal> = [
  {
    id: "wide-k8s-cert-manager-tls",
    kind: "infrastructure",
    goal: "Set up TLS on the Kubernetes ingress with cert-manager",
    cwd: "/home/dev/platform-infra",
    work: [
      "our ingress-nginx terminates plain http and the cert on the LB is a manually uploaded one that expires next month. I want cert-manager with letsencrypt. install it with helm into its own namespace",
      { read: "clusters/prod/ingress-nginx/values.yaml" },
      { write: "clusters/prod/cert-manager/values.yaml" },
      { bash: "helm upgrade --install cert-manager jetstack/cert-manager -n cert-manager --create-namespace --set crds.enabled=true -f clusters/prod/cert-manager/values.yaml" },
      "ClusterIssuers for letsencrypt staging and prod, http01 solver with class nginx",
      { write: "clusters/prod/cert-manager/cluster-issuers.yaml" },
      "annotate the api and app ingresses with the staging issuer first and add the tls block",
      { edit: "apps/api/ingress.yaml" },
      { edit: "apps/web/ingress.yaml" },
      { bash: "kubectl apply -f clusters/prod/cert-manager/cluster-issuers.yaml -f apps/api/ingress.yaml -f apps/web/ingress.yaml" },
      "kubectl get certificate -A says READY False for api-tls",
      { bash: "kubectl describe challenge -n api" },
      "Waiting for HTTP-01 challenge propagation: wrong status code '404', expected '200'",
      "the acme solver ingress gets no class? or the ssl-redirect kicks in on /.well-known. check",
      { bash: "kubectl get ingress -n api -o yaml | grep -A3 acme" },
      "set ingressClassName on the solver in the issuer instead of the class field",
      { edit: "clusters/prod/cert-manager/cluster-issuers.yaml" },
      "ready now. swap both to letsencrypt-prod",
      { edit: "apps/api/ingress.yaml" },
      { edit: "apps/web/ingress.yaml" },
      "curl -vI the api host and check the issuer",
      { bash: "curl -vI https://api.example-shop.io 2>&1 | grep -i issuer" },
      "last bit: enable the cert-manager servicemonitor and alert if a cert is under 14 days from expiry, so we hear about it when renewal breaks",
      { write: "clusters/prod/cert-manager/prometheus-rules.yaml" }
    ],
    off: [
      "set up external-dns so the ingress hosts get route53 records automatically",
      "the api pods get OOMKilled during the nightly import, raise the limits?",
      "move our secrets from sealed-secrets to external-secrets with AWS Secrets Manager",
      "what's the difference between a Deployment and a StatefulSet",
      "how do I get red wine out of a carpet"
    ],
    drift: [
      "unrelated but the HPA for the api never scales past 2",
      { bash: "kubectl describe hpa api -n api" },
      "failed to get cpu utilization: missing request for cpu. add cpu requests to the deployment",
      { edit: "apps/api/deployment.yaml" },
      "and set the HPA to target 70% with max 10",
      { edit: "apps/api/hpa.yaml" }
    ]
  },
  {
    id: "wide-react-native-deeplink-crash",
    kind: "bug",
    goal: "Fix the Android crash when opening the app from a deep link",
    cwd: "/home/dev/rider-app",
    work: [
      "tapping a myapp://trip/123 link from an email kills the app on android when it's not already running. iOS fine. logcat:",
      "E AndroidRuntime: FATAL EXCEPTION: main\nE AndroidRuntime: java.lang.RuntimeException: Unable to start activity ComponentInfo{com.rider.app/com.rider.app.MainActivity}: java.lang.IllegalStateException: Fragment already added\nE AndroidRuntime: \tat com.swmansion.rnscreens.ScreenStack.onUpdate(ScreenStack.kt:112)",
      { read: "android/app/src/main/java/com/rider/app/MainActivity.kt" },
      "onCreate calls super.onCreate(savedInstanceState), react-native-screens wants super.onCreate(null)",
      { edit: "android/app/src/main/java/com/rider/app/MainActivity.kt" },
      "now it opens but lands on home, not the trip. how is the linking config set up?",
      { read: "src/navigation/linking.ts" },
      { grep: "getInitialURL", path: "src" },
      "the trip screen is nested under the Rides tab but the config has trip/:id at the root. nest it properly",
      { edit: "src/navigation/linking.ts" },
      "also the manifest has launchMode standard, so a link while the app is open stacks a second activity. singleTask",
      { read: "android/app/src/main/AndroidManifest.xml" },
      { edit: "android/app/src/main/AndroidManifest.xml" },
      "cold start test with adb",
      { bash: "npx react-native run-android && adb shell am force-stop com.rider.app && adb shell am start -W -a android.intent.action.VIEW -d 'myapp://trip/123' com.rider.app" },
      "works cold. same with the app in background",
      { bash: "adb shell am start -W -a android.intent.action.VIEW -d 'myapp://trip/456' com.rider.app" },
      "jest test for the linking config, getStateFromPath with trip/123 should give Rides > Trip with id",
      { write: "src/navigation/__tests__/linking.test.ts" },
      { bash: "npx jest src/navigation" }
    ],
    off: [
      "add https app links for rider.app/trip/* with the assetlinks.json",
      "push notifications don't show on android 13, it's the POST_NOTIFICATIONS permission right?",
      "upgrade react-navigation from 5 to 6",
      "what's the difference between useEffect and useLayoutEffect",
      "is it worth getting a standing desk"
    ],
    drift: [
      "btw the map screen is janky when the driver marker moves",
      { read: "src/screens/TripMap.tsx" },
      "animate the marker with AnimatedRegion instead of re-rendering the whole MapView every location update",
      { edit: "src/screens/TripMap.tsx" },
      "and memo the route polyline, it's recomputing the decode each render",
      { edit: "src/screens/TripMap.tsx" }
    ]
  },
  {
    id: "wide-python-extract-pricing",
    kind: "refactor",
    goal: "Extract the pricing logic from the orders monolith into its own module",
    cwd: "/home/dev/wholesale-backend",
    work: [
      "price calculation is spread all over orders/models.py, orders/views.py and cart/utils.py. find every place that computes a line price, discount or tax",
      { grep: "def .*price|discount|tax_rate", path: "." },
      { read: "orders/models.py" },
      { read: "cart/utils.py" },
      "make a pricing/ package with a pure function price_order(lines, customer, as_of) -> PriceBreakdown, no django models in the signature, just dataclasses",
      { write: "pricing/__init__.py" },
      { write: "pricing/types.py" },
      { write: "pricing/engine.py" },
      "move the tiered volume discount from Order.compute_total in there as is, don't fix anything yet even the rounding",
      { edit: "pricing/engine.py" },
      { edit: "orders/models.py" },
      "now cart/utils.py estimate_cart_total does its own copy of it, point it at pricing too",
      { edit: "cart/utils.py" },
      "before going further, characterization test: take 50 real orders from the fixture dump and assert the new totals match the old ones to the cent",
      { write: "pricing/tests/test_parity.py" },
      { bash: "pytest pricing -q" },
      "3 failed, all with customer group discounts. AssertionError: Decimal('104.37') != Decimal('104.38')",
      "old code quantizes after each line, mine at the end. do it per line like before",
      { edit: "pricing/engine.py" },
      { bash: "pytest pricing orders cart -q" },
      "add an import-linter contract so pricing can't import from orders or cart",
      { edit: ".importlinter" },
      { bash: "lint-imports" },
      "ok commit"
    ],
    off: [
      "add a per-customer price list override for the two big accounts",
      "the VAT on shipping is wrong for orders to Northern Ireland",
      "move the project from setup.py to pyproject with poetry",
      "what's the difference between a dataclass and a pydantic model",
      "how long does it take to learn to play the piano as an adult"
    ],
    drift: [
      "btw the invoice export cron has been failing since monday",
      { bash: "kubectl logs cronjob/invoice-export --tail=50" },
      "UnicodeEncodeError: 'latin-1' codec can't encode character '\\u2013' in position 88",
      "write the csv as utf-8 with a BOM so excel opens it",
      { read: "invoicing/export.py" },
      { edit: "invoicing/export.py" }
    ]
  },
  {
    id: "wide-go-contributing-guide",
    kind: "docs",
    goal: "Write a CONTRIBUTING.md and dev setup guide for the Go library",
    cwd: "/home/dev/go-ratelimit",
    work: [
      "people keep opening PRs that fail CI on lint and don't sign off. we need a proper contributing doc. look at the Makefile and the CI workflow so it matches what actually runs",
      { read: "Makefile" },
      { read: ".github/workflows/ci.yml" },
      "draft it: prerequisites (go 1.21+, golangci-lint version pinned in CI), clone, make test, make lint, how to run the redis-backed tests with docker compose",
      { write: "CONTRIBUTING.md" },
      "the integration tests are behind the integration build tag, mention go test -tags integration ./... and the REDIS_ADDR env var",
      { edit: "CONTRIBUTING.md" },
      "section on commit messages, we use conventional commits because release-please reads them, and DCO sign-off with git commit -s",
      { edit: "CONTRIBUTING.md" },
      "do the steps actually work from a fresh clone? try them",
      { bash: "cd /tmp && git clone https://github.com/acme/go-ratelimit && cd go-ratelimit && make test && make lint" },
      "make lint: golangci-lint: command not found. right, say to install it with the install script and the version, don't go install it",
      { edit: "CONTRIBUTING.md" },
      "link it from the README and add a PR template with the checklist from the doc",
      { edit: "README.md" },
      { write: ".github/pull_request_template.md" },
      "proofread the whole thing, short sentences, no 'simply'",
      { read: "CONTRIBUTING.md" },
      { edit: "CONTRIBUTING.md" }
    ],
    off: [
      "add a sliding window limiter next to the token bucket",
      "the godoc example for NewLimiter doesn't compile anymore since we changed the options",
      "move CI from travis leftovers to github actions matrix for go 1.21 and 1.22",
      "what's the difference between a buffered and an unbuffered channel",
      "any tips for running a first half marathon"
    ],
    drift: [
      "btw there's an issue that Allow() races under -race with the redis store",
      { bash: "go test -race ./store/redis/..." },
      "WARNING: DATA RACE\nWrite at 0x00c0001a2088 by goroutine 23:\n  github.com/acme/go-ratelimit/store/redis.(*Store).refreshScript()\n      store/redis/store.go:74",
      "guard the script sha with a sync.Once instead of the bare field",
      { read: "store/redis/store.go" },
      { edit: "store/redis/store.go" }
    ]
  }
]
