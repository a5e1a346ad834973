import type { CorpusGoal } from "./corpus.ts"

/** More of the wide set (goals-wide-b.ts says how it was written and used). */
export const wideBMore: ReadonlyArray<CorpusGoal> = [
  {
    id: "wide-swift-async-networking",
    kind: "refactor",
    goal: "Replace completion handlers with async/await in the iOS app's networking layer",
    cwd: "/home/dev/TripPlanner-iOS",
    work: [
      "APIClient is all @escaping (Result<T, APIError>) -> Void and the view models are pyramids of closures. let's go async/await, min target is iOS 15 so we can",
      { read: "TripPlanner/Networking/APIClient.swift" },
      { grep: "completion: @escaping", path: "TripPlanner/Networking" },
      "make request<T: Decodable>(_ endpoint: Endpoint) async throws -> T on top of URLSession.data(for:), map the status codes to APIError like the old one does",
      { edit: "TripPlanner/Networking/APIClient.swift" },
      "now TripsService, BookingService and ProfileService, same treatment. keep the old closure methods as deprecated wrappers with a Task inside for now so the build doesn't break everywhere",
      { edit: "TripPlanner/Networking/Services/TripsService.swift" },
      { edit: "TripPlanner/Networking/Services/BookingService.swift" },
      { edit: "TripPlanner/Networking/Services/ProfileService.swift" },
      "the token refresh is the tricky one, two requests 401 at the same time and both refresh. make the authenticator an actor that holds the in-flight refresh Task",
      { read: "TripPlanner/Networking/TokenRefresher.swift" },
      { write: "TripPlanner/Networking/AuthSession.swift" },
      "build",
      { bash: "xcodebuild -scheme TripPlanner -destination 'platform=iOS Simulator,name=iPhone 15' build | xcpretty" },
      "TripsViewModel.swift:48:17: error: call to main actor-isolated instance method 'apply(_:)' in a synchronous nonisolated context",
      "mark the view models @MainActor and call the service from a Task in onAppear",
      { edit: "TripPlanner/Features/Trips/TripsViewModel.swift" },
      { edit: "TripPlanner/Features/Booking/BookingViewModel.swift" },
      "the mock URLProtocol tests still use expectations and wait(for:), convert them to async test funcs",
      { edit: "TripPlannerTests/Networking/APIClientTests.swift" },
      "run the tests",
      { bash: "xcodebuild test -scheme TripPlanner -destination 'platform=iOS Simulator,name=iPhone 15' | xcpretty" },
      "nothing calls the deprecated wrappers anymore? then delete them",
      { grep: "completion:", path: "TripPlanner" },
      { edit: "TripPlanner/Networking/Services/TripsService.swift" }
    ],
    off: [
      "add offline caching of the trip list so it opens without network",
      "the booking confirmation screen crashes on iPad in split view",
      "move the project from CocoaPods to Swift Package Manager",
      "is Combine dead now that we have async sequences?",
      "what's the best time of year to visit Japan"
    ],
    drift: [
      "the map pins for hotels show up in the wrong spot, off by a few hundred meters",
      { read: "TripPlanner/Features/Map/HotelAnnotation.swift" },
      "latitude and longitude are swapped in the CLLocationCoordinate2D init",
      { edit: "TripPlanner/Features/Map/HotelAnnotation.swift" },
      "also cluster them when zoomed out, use MKClusterAnnotation",
      { edit: "TripPlanner/Features/Map/TripMapView.swift" }
    ]
  },
  {
    id: "wide-spring-batch-csv-oom",
    kind: "bug",
    goal: "Fix the Spring Batch import job running out of memory on large CSV files",
    cwd: "/home/dev/settlement-service",
    work: [
      "the nightly settlement import died again on the 4GB file from the acquirer:\njava.lang.OutOfMemoryError: Java heap space\n\tat java.base/java.util.Arrays.copyOf(Arrays.java:3537)\n\tat java.base/java.util.ArrayList.grow(ArrayList.java:237)\n\tat com.acme.settlement.batch.SettlementLineReader.read(SettlementLineReader.java:54)",
      { read: "src/main/java/com/acme/settlement/batch/SettlementLineReader.java" },
      { read: "src/main/java/com/acme/settlement/batch/ImportJobConfig.java" },
      "so the custom reader does Files.readAllLines on open() and hands them out one by one. that's the whole file in heap. replace it with a FlatFileItemReader",
      { edit: "src/main/java/com/acme/settlement/batch/ImportJobConfig.java" },
      "DelimitedLineTokenizer with ; and the column names from the header, linesToSkip 1, FieldSetMapper into SettlementLine",
      { write: "src/main/java/com/acme/settlement/batch/SettlementLineFieldSetMapper.java" },
      "the step is chunk(50000), bring it down to 1000, the writer holds the whole chunk plus the JPA context",
      { edit: "src/main/java/com/acme/settlement/batch/ImportJobConfig.java" },
      "the writer is a RepositoryItemWriter doing saveAll, hibernate keeps every entity in the persistence context for the whole step? switch to JdbcBatchItemWriter",
      { read: "src/main/java/com/acme/settlement/batch/SettlementWriter.java" },
      { edit: "src/main/java/com/acme/settlement/batch/SettlementWriter.java" },
      "is the processor caching anything? the merchant lookup",
      { grep: "HashMap|ConcurrentHashMap", path: "src/main/java/com/acme/settlement/batch" },
      "yeah an unbounded map of merchant ids. make it a caffeine cache with a max size of 10k",
      { edit: "src/main/java/com/acme/settlement/batch/MerchantEnrichingProcessor.java" },
      "generate a 2GB test file and run the job with -Xmx512m",
      { bash: "python3 scripts/gen_settlement_csv.py --rows 20000000 > /tmp/settlement-big.csv" },
      { bash: "./gradlew bootRun --args='--spring.batch.job.name=settlementImport input=/tmp/settlement-big.csv' -Dorg.gradle.jvmargs=-Xmx512m" },
      "finished in 11 min, heap flat around 300MB. run the batch tests",
      { bash: "./gradlew test --tests '*ImportJob*'" }
    ],
    off: [
      "add a step that emails the finance team a summary after the import",
      "the job restarts from the beginning after a failure instead of the last committed chunk",
      "upgrade to Spring Boot 3.2 and Spring Batch 5",
      "what's the difference between G1 and ZGC in practice?",
      "how do I stop my cat scratching the sofa"
    ],
    drift: [
      "different thing, the refunds REST endpoint returns amounts with 10 decimal places",
      { read: "src/main/java/com/acme/settlement/api/RefundController.java" },
      "it's BigDecimal divide without a scale. setScale(2, HALF_EVEN) in the mapper",
      { edit: "src/main/java/com/acme/settlement/api/RefundMapper.java" },
      "and a test for a 3-way split refund",
      { write: "src/test/java/com/acme/settlement/api/RefundMapperTest.java" }
    ]
  },
  {
    id: "wide-django-admin-saml",
    kind: "feature",
    goal: "Add SAML single sign-on with Okta to the Django admin",
    cwd: "/home/dev/inventory-backoffice",
    work: [
      "security wants staff to log into /admin through Okta, no more local passwords. djangosaml2 or python3-saml, which fits better with the admin?",
      { read: "backoffice/settings/base.py" },
      { read: "backoffice/urls.py" },
      "go with djangosaml2. add it, the Saml2Backend next to ModelBackend, and mount its urls under /saml2/",
      { bash: "pip install djangosaml2 && pip freeze | grep -i saml >> requirements.txt" },
      { edit: "backoffice/settings/base.py" },
      { edit: "backoffice/urls.py" },
      "SAML_CONFIG: sp entity id https://backoffice.acme.io/saml2/metadata/, idp metadata from the okta url in an env var, sign requests with the cert in /etc/backoffice/saml",
      { write: "backoffice/settings/saml.py" },
      "map the okta attributes: email -> username and email, firstName, lastName. create users on first login",
      { edit: "backoffice/settings/saml.py" },
      "only people in the okta group 'backoffice-admins' should get is_staff. subclass the backend and set it from the groups attribute",
      { write: "accounts/saml_backend.py" },
      "the admin login page should just redirect to /saml2/login/?next=/admin/",
      { edit: "backoffice/urls.py" },
      "xmlsec1 not found",
      { bash: "which xmlsec1 || sudo apt-get install -y xmlsec1" },
      "saml2.response.StatusError: Invalid Destination in response: http://localhost:8000/saml2/acs/ expected https://backoffice.acme.io/saml2/acs/",
      "behind the load balancer we see http. SECURE_PROXY_SSL_HEADER and USE_X_FORWARDED_HOST, the ALB sets X-Forwarded-Proto",
      { edit: "backoffice/settings/production.py" },
      "tests with a fake assertion for the staff mapping: in the group -> staff, not in it -> no admin access",
      { write: "accounts/tests/test_saml_backend.py" },
      { bash: "pytest accounts -q" }
    ],
    off: [
      "add an audit log of who changed stock levels in the admin",
      "enforce 2FA for the API tokens used by the warehouse scanners",
      "the admin changelist for products times out with the SKU search",
      "how do django signals compare to just overriding save()?",
      "what should I cook for six people, one is vegan"
    ],
    drift: [
      "btw the export to CSV admin action writes the prices with a comma decimal separator in excel",
      { read: "inventory/admin.py" },
      "write them with a dot and add the BOM so excel opens it as utf-8",
      { edit: "inventory/admin.py" },
      "same for the stock movements export",
      { edit: "inventory/admin_movements.py" }
    ]
  },
  {
    id: "wide-node-sdk-openapi-docs",
    kind: "docs",
    goal: "Generate the Node SDK's API reference docs from the OpenAPI spec",
    cwd: "/home/dev/payments-node-sdk",
    work: [
      "the reference section in docs/ is hand-written and half the endpoints are missing or have old params. I want it generated from openapi/payments.yaml on every release. what do we have in docs/ right now?",
      { bash: "ls docs docs/reference openapi" },
      { read: "openapi/payments.yaml" },
      "redocly for the HTTP reference, plus a page per SDK resource showing the method that calls each operation. start with redocly build-docs into docs/reference/api.html",
      { bash: "npm install -D @redocly/cli" },
      { bash: "npx redocly lint openapi/payments.yaml" },
      "[1] openapi/payments.yaml:412:11 at #/paths/~1refunds~1{id}/get/responses/200\nExample value must conform to the schema: `amount` property type must be integer.",
      "fix the examples the linter complains about, don't change the schemas",
      { edit: "openapi/payments.yaml" },
      "each operation needs x-sdk-method so we know it's client.refunds.retrieve etc. add them from what src/resources does",
      { grep: "this._request\\(", path: "src/resources" },
      { edit: "openapi/payments.yaml" },
      "script that walks the spec and writes a markdown page per resource: method signature, params table, the response type, a code sample in TS",
      { write: "scripts/gen-reference.ts" },
      "run it",
      { bash: "npx tsx scripts/gen-reference.ts && ls docs/reference" },
      "the params tables lose the descriptions for $ref'd schemas, dereference the spec first",
      { edit: "scripts/gen-reference.ts" },
      "add npm run docs:reference and run it in the release workflow before publishing the docs site",
      { edit: "package.json" },
      { edit: ".github/workflows/release.yml" },
      "delete the old handwritten reference pages and link the generated ones from the sidebar",
      { bash: "git rm docs/reference/charges.md docs/reference/refunds.md docs/reference/customers.md" },
      { edit: "docs/.vitepress/config.ts" }
    ],
    off: [
      "add automatic retries with exponential backoff for 429 responses in the client",
      "the SDK types say amount is a number but the API sends it as a string for some currencies",
      "write a migration guide for users going from v2 to v3 of the SDK",
      "is there a reason to ship both ESM and CJS builds still?",
      "what's a good stretch routine for lower back pain"
    ],
    drift: [
      "the webhook signature helper rejects valid events when the body has unicode in it",
      { read: "src/webhooks.ts" },
      "we compute the hmac over JSON.stringify of the parsed body, it has to be the raw body buffer",
      { edit: "src/webhooks.ts" },
      "test with a payload that has an emoji in the description",
      { write: "test/webhooks.test.ts" },
      { bash: "npm test -- webhooks" }
    ]
  }
]
