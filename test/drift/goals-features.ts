import type { CorpusGoal } from "./corpus.ts"

/** Features of web products: the goal names an outcome; the work names the parts it takes. */
export const features: ReadonlyArray<CorpusGoal> = [
  {
    id: "feature-dark-mode",
    kind: "feature",
    goal: "Add dark mode to the settings page",
    cwd: "/home/dev/notes-web",
    work: [
      "where are the colors defined right now? I want them as CSS variables",
      { grep: "#ffffff", path: "src" }, { read: "src/styles/theme.css" },
      "move all the hardcoded colors in settings into css variables",
      { edit: "src/styles/theme.css" }, { edit: "src/pages/settings/Settings.module.css" },
      "add a [data-theme=dark] block with the palette from figma: bg #121212, surface #1e1e1e, text #e0e0e0",
      { edit: "src/styles/theme.css" },
      "now a toggle in the settings page that persists to localStorage",
      { edit: "src/pages/settings/Settings.tsx" },
      "respect prefers-color-scheme when nothing is saved",
      { write: "src/hooks/useTheme.ts" },
      "it flashes white on reload, can we set the attribute before react mounts",
      { edit: "index.html" },
      "contrast of the secondary text is too low, bump it",
      { edit: "src/styles/theme.css" },
      "npm run test && npm run lint",
      { bash: "npm run test && npm run lint" },
      "take screenshots of both for the PR",
      { bash: "npx playwright screenshot http://localhost:5173/settings settings.png" }
    ],
    off: [
      "what's a good recipe for banana bread",
      "fix the flaky e2e test for login",
      "how do I negotiate a raise",
      "add an export to markdown feature for notes",
      "explain how oauth pkce works"
    ],
    drift: [
      "can you draft the onboarding email sequence for new signups, 3 emails over a week",
      "second email should highlight sharing notes",
      "write the subject lines with a/b variants",
      "put them in docs/emails.md",
      { write: "docs/emails.md" }
    ]
  },
  {
    id: "feature-contacts-import",
    kind: "feature",
    goal: "Let users import contacts from a CSV file",
    cwd: "/home/dev/crm-web",
    work: [
      "users should be able to upload a spreadsheet of contacts on /contacts/import",
      { read: "app/controllers/contacts_controller.rb" },
      "generate a ContactsImportsController with new and create",
      { write: "app/controllers/contacts_imports_controller.rb" }, { edit: "config/routes.rb" },
      "parse with CSV.foreach headers: true, map name, email, phone columns",
      { write: "app/services/contacts/csv_importer.rb" },
      "what if the header row says 'E-mail' or 'Email Address'? normalize headers",
      { edit: "app/services/contacts/csv_importer.rb" },
      "do it in a background job, files can be 50k rows",
      { write: "app/jobs/import_contacts_job.rb" },
      "show progress on the page with turbo streams",
      { edit: "app/views/contacts_imports/show.html.erb" },
      "bundle exec rspec spec/services/contacts",
      { bash: "bundle exec rspec spec/services/contacts" },
      "skip rows with invalid emails but report them at the end",
      { edit: "app/services/contacts/csv_importer.rb" },
      "add a sample file users can download",
      { write: "public/samples/contacts.csv" }
    ],
    off: [
      "what are the rules of pickleball",
      "upgrade rails to 7.2",
      "write a toast for my coworker's farewell party",
      "add two-factor auth to the admin login",
      "how much should I tip in japan"
    ],
    drift: [
      "sales asked for a quick fix: the deals kanban should sort by close date",
      { read: "app/javascript/controllers/kanban_controller.js" },
      "sort descending, and nulls last",
      { edit: "app/javascript/controllers/kanban_controller.js" },
      "reload and check",
      "also color overdue deals red"
    ]
  },
  {
    id: "feature-docs-search",
    kind: "feature",
    goal: "Add full-text search to the docs site",
    cwd: "/home/dev/docs-site",
    work: [
      "add search to the docs site, client side, no server",
      "pagefind or lunr? we have ~400 pages",
      "go with pagefind",
      { bash: "npm i -D pagefind" }, { edit: "package.json" },
      "run it after astro build in the build script",
      { edit: "package.json" },
      "add an input box in the header component",
      { edit: "src/components/Header.astro" },
      "cmd+k should open it",
      { write: "src/components/SearchDialog.astro" },
      "exclude the changelog pages from the index",
      { edit: "src/layouts/Changelog.astro" },
      "npm run build && npx serve dist",
      { bash: "npm run build && npx serve dist" },
      "results don't show the section heading, can we add it",
      { edit: "src/components/SearchDialog.astro" },
      "style the results like the sidebar",
      { edit: "src/styles/search.css" }
    ],
    off: [
      "give me 5 ideas for a team building activity",
      "what's the difference between espresso and ristretto",
      "write the release notes for v2.3 of the sdk",
      "fix the broken links checker in ci",
      "how tall is mount kilimanjaro"
    ],
    drift: [
      "let's redo the landing page hero, the copy is weak",
      "write three headline options for a developer audience",
      "the second one, now a subheading",
      { edit: "src/pages/index.astro" },
      "make the cta button say 'Start building'"
    ]
  },
  {
    id: "feature-subscriptions",
    kind: "feature",
    goal: "Add Stripe subscription billing with monthly and annual plans",
    cwd: "/home/dev/saas-app",
    work: [
      "set up subscriptions for the pro plan, monthly and yearly",
      { bash: "npm i stripe @stripe/stripe-js" },
      "create the checkout session in an api route",
      { write: "src/app/api/checkout/route.ts" },
      "handle the webhook for customer.subscription.updated and deleted",
      { write: "src/app/api/stripe/webhook/route.ts" },
      "verify the signature, we need the raw body in the app router",
      { edit: "src/app/api/stripe/webhook/route.ts" },
      "store the status on the team table",
      { edit: "prisma/schema.prisma" }, { bash: "npx prisma migrate dev --name subscription_status" },
      "pricing page with a toggle, yearly shows 2 months free",
      { write: "src/app/pricing/page.tsx" },
      "stripe listen --forward-to localhost:3000/api/stripe/webhook",
      { bash: "stripe listen --forward-to localhost:3000/api/stripe/webhook" },
      "the event comes in but the team isn't updated, customer id is null",
      { edit: "src/app/api/checkout/route.ts" },
      "add the customer portal link in settings",
      { edit: "src/app/settings/billing/page.tsx" }
    ],
    off: [
      "write a bedtime story about a dragon who is afraid of the dark",
      "what's the best way to store fresh herbs",
      "add a changelog page to the marketing site",
      "how do I set up a monorepo with turborepo",
      "explain rust's borrow checker"
    ],
    drift: [
      "I need to prep for my 1:1 with my manager, help me list what I shipped this month",
      "also things I want to ask about promotion",
      "make it less whiny",
      "turn it into 5 bullet points"
    ]
  },
  {
    id: "feature-undo-delete",
    kind: "feature",
    goal: "Let users undo deleting a task",
    cwd: "/home/dev/todo-app",
    work: [
      "when you delete a task, show a toast with a button for 5 seconds instead of deleting right away",
      { read: "src/components/TaskItem.vue" },
      "soft delete on the server: deleted_at column and filter it out in list",
      { edit: "server/db/migrations/012_tasks_deleted_at.sql" }, { edit: "server/routes/tasks.js" },
      "POST /tasks/:id/restore",
      { edit: "server/routes/tasks.js" },
      "the toast component, reuse the one from notifications?",
      { read: "src/components/Toast.vue" },
      "yes, add an action button slot to it",
      { edit: "src/components/Toast.vue" },
      "ctrl+z should bring it back too",
      { write: "src/composables/useUndo.js" },
      "purge soft-deleted rows older than 30 days in the nightly job",
      { edit: "server/jobs/nightly.js" },
      "npm test",
      { bash: "npm test" },
      "one failing: list still shows the deleted task, cache?",
      { edit: "src/stores/tasks.js" }
    ],
    off: [
      "give me a 3 day meal prep plan",
      "add recurring tasks (every monday etc)",
      "how do I make my resume stand out",
      "what's new in vue 3.5",
      "write a poem about the ocean"
    ],
    drift: [
      "let's look at the slow page load on the dashboard, lighthouse says 5s LCP",
      { bash: "npx lighthouse http://localhost:5173/dashboard" },
      "the chart library is 400kb, lazy load it",
      { edit: "src/views/Dashboard.vue" },
      "and the fonts, preload them",
      { edit: "index.html" }
    ]
  },
  {
    id: "feature-checkout-i18n",
    kind: "feature",
    goal: "Translate the checkout flow into German, French and Spanish",
    cwd: "/home/dev/storefront",
    work: [
      "set up next-intl with the app router",
      { bash: "npm i next-intl" }, { write: "src/i18n/request.ts" }, { edit: "next.config.js" },
      "extract all strings from the checkout components into messages/en.json",
      { edit: "src/components/checkout/CartSummary.tsx" }, { write: "messages/en.json" },
      "prices should use Intl.NumberFormat with the locale and currency",
      { edit: "src/lib/format.ts" },
      "the address form needs postal code before city for germany",
      { edit: "src/components/checkout/AddressForm.tsx" },
      "generate de, fr, es json from en with placeholders I can send to the agency",
      { write: "messages/de.json" },
      "language switcher in the checkout header",
      { write: "src/components/LocaleSwitcher.tsx" },
      "run the playwright checkout spec with locale de",
      { bash: "npx playwright test checkout --project=de" },
      "the date on the order confirmation is still english",
      { edit: "src/components/checkout/Confirmation.tsx" }
    ],
    off: [
      "what's the etymology of the word salary",
      "add apple pay to checkout",
      "how do I deal with a toddler's tantrums",
      "write the job post for a junior frontend developer",
      "explain the event loop in node"
    ],
    drift: [
      "before I forget, the product image carousel is broken on safari",
      { read: "src/components/product/Gallery.tsx" },
      "scroll-snap doesn't work with the transform, switch to translate on the track",
      { edit: "src/components/product/Gallery.tsx" },
      "test it on safari with browserstack"
    ]
  }
]
