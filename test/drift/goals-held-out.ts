import type { CorpusGoal } from "./corpus.ts"

/**
 * Written after the detector was settled on the development goals, and never tuned on: the
 * figures on these say how it does on work it has not seen. Only add goals here, and never change
 * the detector to fix one of them.
 */
export const heldOut: ReadonlyArray<CorpusGoal> = [
  {
    id: "held-flaky-checkout-test",
    kind: "bug",
    goal: "Fix the flaky checkout e2e test",
    cwd: "/home/dev/webshop",
    work: [
      "the checkout spec fails maybe 1 in 5 runs on CI, can you figure out why",
      { read: "cypress/e2e/checkout.cy.ts" },
      "here's the failure: Timed out retrying after 4000ms: Expected to find element: [data-test=pay-button], but never found it.",
      "the pay button renders only after the shipping rates request resolves, we should wait on that request",
      { edit: "cypress/e2e/checkout.cy.ts" },
      "use cy.intercept on /api/shipping-rates and cy.wait the alias",
      { bash: "npx cypress run --spec cypress/e2e/checkout.cy.ts" },
      "run it 20 times in a loop to be sure",
      { bash: "for i in $(seq 20); do npx cypress run --spec cypress/e2e/checkout.cy.ts || break; done" },
      "still one failure on run 14, the coupon field animation covers the button",
      "disable animations in the test env",
      { edit: "cypress/support/e2e.ts" },
      "rerun the loop",
      { bash: "for i in $(seq 20); do npx cypress run --spec cypress/e2e/checkout.cy.ts || break; done" },
      "20 out of 20. push it",
      { bash: "git push" }
    ],
    off: [
      "what's a good itinerary for a weekend in rome",
      "add a gift wrap option to the cart",
      "explain the difference between http/2 and http/3",
      "write a thank you email to the recruiter",
      "how do I clean white sneakers"
    ],
    drift: [
      "while I'm here, the product page title is wrong in google results",
      { read: "src/pages/product/[slug].tsx" },
      "the meta title uses the sku instead of the product name",
      { edit: "src/pages/product/[slug].tsx" },
      "add open graph tags as well",
      "check it with the rich results test"
    ]
  },
  {
    id: "held-invoice-discount-total",
    kind: "bug",
    goal: "Fix wrong totals in the PDF invoice when a discount is applied",
    cwd: "/home/dev/billing",
    work: [
      "customer says invoice 2291 shows a total of 90 but they paid 81 with the 10% code",
      { grep: "discount", path: "billing" }, { read: "billing/pdf/render.py" },
      "the pdf recomputes the total from line items and ignores the discount lines",
      "use invoice.total from the model instead of summing in the template",
      { edit: "billing/pdf/render.py" }, { edit: "billing/pdf/templates/invoice.html" },
      "the tax line is computed before discount too, that's wrong for us",
      { read: "billing/tax.py" },
      "apply the discount first then tax, like the checkout does",
      { edit: "billing/tax.py" },
      "regenerate 2291 and show me the numbers",
      { bash: "python -m billing.pdf.render 2291 --out /tmp/2291.pdf && pdftotext /tmp/2291.pdf -" },
      "add a test with a percentage and a fixed amount code",
      { edit: "tests/test_pdf_totals.py" }, { bash: "pytest tests/test_pdf_totals.py" },
      "how many other invoices were sent with the wrong total since march?",
      { bash: "psql billing -c \"select count(*) from invoices where discount_total > 0 and issued_at > '2024-03-01'\"" }
    ],
    off: [
      "what are the best hiking boots for wide feet",
      "add a dark theme to the customer portal",
      "how does a heat pump work",
      "write a short speech for my team's award ceremony",
      "set up dependabot for this repo"
    ],
    drift: [
      "can you write a sql report of revenue per country for the board meeting",
      "group by quarter",
      "add a column with growth vs last year",
      "make a chart of it"
    ]
  },
  {
    id: "held-totp-2fa",
    kind: "feature",
    goal: "Add two-factor authentication with TOTP",
    cwd: "/home/dev/accounts-api",
    work: [
      "users should be able to turn on an authenticator app for their account",
      "generate a secret and return an otpauth:// url for the qr code",
      { write: "internal/mfa/totp.go" },
      "use pquerna/otp, don't roll our own",
      { bash: "go get github.com/pquerna/otp" },
      "store the secret encrypted with the existing kms helper",
      { read: "internal/crypto/kms.go" }, { edit: "internal/mfa/totp.go" },
      "after the password check, if the user has it enabled, return a challenge token instead of the session",
      { edit: "internal/handlers/login.go" },
      "POST /login/verify takes the challenge and the 6 digit code",
      { edit: "internal/handlers/login.go" },
      "allow one step of clock skew",
      "10 recovery codes, hashed, shown once",
      { write: "internal/mfa/recovery.go" },
      "go test ./internal/...",
      { bash: "go test ./internal/..." },
      "rate limit the verify endpoint to 5 tries per challenge"
    ],
    off: [
      "what's a good name for a coffee shop",
      "add pagination to GET /invoices",
      "explain how bloom filters work",
      "help me write a birthday message for my brother",
      "what are the symptoms of burnout"
    ],
    drift: [
      "the mobile team wants a new endpoint that returns the user's avatar in three sizes",
      { write: "internal/handlers/avatar.go" },
      "resize with imaging on upload, not on read",
      "store them in the bucket under avatars/{id}/{size}.jpg",
      "add it to the openapi spec"
    ]
  },
  {
    id: "held-share-links",
    kind: "feature",
    goal: "Let users share a document through a public link",
    cwd: "/home/dev/docs-app",
    work: [
      "people want to send a document to someone outside the workspace",
      "generate an unguessable token per document and a /s/:token route that renders read-only",
      { write: "server/routes/shared.ts" }, { edit: "server/db/schema.prisma" },
      "links should expire, default 7 days, owner can pick 1, 7, 30 or never",
      { edit: "server/db/schema.prisma" }, { bash: "npx prisma migrate dev --name share_links" },
      "a Share dialog in the document toolbar with copy-to-clipboard",
      { write: "web/src/components/ShareDialog.tsx" }, { edit: "web/src/components/DocToolbar.tsx" },
      "owner can revoke the link from the same dialog",
      { edit: "web/src/components/ShareDialog.tsx" }, { edit: "server/routes/shared.ts" },
      "the read-only page shouldn't load the editor bundle",
      { write: "web/src/pages/SharedView.tsx" },
      "count views per link",
      "npm test -w server",
      { bash: "npm test -w server" }
    ],
    off: [
      "how do I repot an orchid",
      "add comments on documents",
      "explain how public key cryptography works",
      "what's the best way to learn touch typing",
      "write a product hunt launch post"
    ],
    drift: [
      "the editor is slow with docs over 50 pages, profile the typing lag",
      { read: "web/src/editor/Editor.tsx" },
      "every keystroke re-renders the outline sidebar",
      "memo the outline and debounce its updates",
      { edit: "web/src/components/Outline.tsx" }
    ]
  },
  {
    id: "held-expo-upgrade",
    kind: "migration",
    goal: "Upgrade the mobile app from Expo SDK 49 to 51",
    cwd: "/home/dev/fitness-app",
    work: [
      "bump expo to 51 and the matching react native version",
      { bash: "npx expo install expo@^51.0.0 --fix" },
      "expo doctor complains about 6 packages",
      { bash: "npx expo-doctor" },
      "update them to the versions it suggests",
      { edit: "package.json" },
      "expo-camera's API changed, CameraView replaces Camera",
      { edit: "src/screens/ScanScreen.tsx" },
      "the splash screen config moved to the plugin in app.json",
      { edit: "app.json" },
      "ios build fails: Pod install failed, 'ExpoModulesCore' requires a higher minimum deployment target",
      "set ios.deploymentTarget to 13.4 via expo-build-properties",
      { edit: "app.json" },
      "eas build --platform ios --profile preview",
      { bash: "eas build --platform ios --profile preview" },
      "android works, test the workout tracker on both"
    ],
    off: [
      "what are good stretches after running",
      "add apple health sync for steps",
      "write a poem about the sea",
      "how do I cancel my gym membership politely",
      "explain the difference between sql and nosql"
    ],
    drift: [
      "app store connect says our screenshots are the wrong size for the 6.7 inch iphone",
      "what sizes do they want now",
      "resize the five we have",
      { bash: "sips -z 2796 1290 screenshots/*.png" },
      "upload them with fastlane deliver"
    ]
  }
]
