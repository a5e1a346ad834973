import type { CorpusGoal } from "./corpus.ts"

/**
 * The second fresh held-out set: written blind to the detector (without reading or running it),
 * before any change measured on it, in stacks and domains the rest of the corpus does not cover
 * (Django, .NET, Flutter, Elixir/Phoenix, Vue 3, Laravel, Qt, Ansible, Spark, Electron, SvelteKit,
 * Postgres administration). Only measured on, never tuned on. Do not edit a goal here after
 * measuring on it.
 */
export const freshTwo: ReadonlyArray<CorpusGoal> = [
  {
    id: "fresh2-django-email-case",
    kind: "bug",
    goal: "Fix duplicate user accounts from email case differences",
    cwd: "/home/dev/clinic-portal",
    work: [
      "support says a patient has two logins, Jane.Doe@gmail.com and jane.doe@gmail.com. how does registration check if the address is taken?",
      { grep: "email", path: "accounts" },
      { read: "accounts/forms.py" },
      "clean_email does User.objects.filter(email=...).exists(), that's case sensitive. lowercase it on save and use email__iexact for the check",
      { edit: "accounts/forms.py" },
      "the EmailBackend does get(email=username) too, so Jane.Doe can't sign in either",
      { read: "accounts/backends.py" },
      { edit: "accounts/backends.py" },
      "add a UniqueConstraint on Lower('email') so postgres enforces it",
      { edit: "accounts/models.py" },
      { bash: "python manage.py makemigrations accounts && python manage.py migrate" },
      "django.db.utils.IntegrityError: could not create unique index \"accounts_user_email_ci_uniq\"\nDETAIL:  Key (lower(email::text))=(jane.doe@gmail.com) is duplicated.",
      "right, the existing ones. management command that lists the pairs with last login so support can merge them by hand, no auto-merge",
      { write: "accounts/management/commands/find_duplicate_emails.py" },
      { bash: "python manage.py find_duplicate_emails" },
      "17 pairs, send that list to support. tests for the form and the backend with mixed-case input",
      { write: "accounts/tests/test_email_case.py" },
      "pytest accounts",
      { bash: "pytest accounts -q" },
      "commit",
      { bash: "git commit -am 'Treat emails case-insensitively at signup and login'" }
    ],
    off: [
      "add a 'resend activation email' link to the login page",
      "the appointment reminder emails go out an hour late since the DST switch",
      "bump us to Django 5.0, what will break?",
      "how do I get my toddler to sleep through the night",
      "what's the difference between select_related and prefetch_related"
    ],
    drift: [
      "btw the admin changelist for appointments takes 8 seconds to load",
      { read: "appointments/admin.py" },
      "it's one query per row for the patient and the doctor, add list_select_related",
      { edit: "appointments/admin.py" },
      "and a date_hierarchy on starts_at",
      "check the query count in the debug toolbar again, it was 400+",
      { bash: "python manage.py runserver" }
    ]
  },
  {
    id: "fresh2-dotnet-system-text-json",
    kind: "migration",
    goal: "Move the orders API from Newtonsoft.Json to System.Text.Json",
    cwd: "/home/dev/orders-api",
    work: [
      "we still call AddNewtonsoftJson, switch to the built-in serializer and drop that package",
      { grep: "Newtonsoft", path: "src" },
      { read: "src/Orders.Api/Program.cs" },
      "JsonSerializerOptions: camelCase, skip nulls when writing, enums as strings like before",
      { edit: "src/Orders.Api/Program.cs" },
      "replace [JsonProperty] with [JsonPropertyName] in the DTOs",
      { bash: "grep -rl 'JsonProperty(' src | xargs sed -i 's/\\[JsonProperty(\"/[JsonPropertyName(\"/g'" },
      "dotnet build",
      { bash: "dotnet build" },
      "error CS0246: The type or namespace name 'JObject' could not be found (are you missing a using directive or an assembly reference?) [src/Orders.Api/Webhooks/PaymentWebhookHandler.cs(42,13)]",
      "use JsonNode there instead of JObject",
      { read: "src/Orders.Api/Webhooks/PaymentWebhookHandler.cs" },
      { edit: "src/Orders.Api/Webhooks/PaymentWebhookHandler.cs" },
      "dotnet test",
      { bash: "dotnet test" },
      "System.Text.Json.JsonException : The JSON value could not be converted to System.Decimal. Path: $.items[0].unitPrice | LineNumber: 0 | BytePositionInLine: 58.",
      "the mobile app sends prices as strings, allow reading numbers from strings",
      { edit: "src/Orders.Api/Program.cs" },
      { bash: "dotnet test" },
      "green. remove the Microsoft.AspNetCore.Mvc.NewtonsoftJson reference",
      { bash: "dotnet remove src/Orders.Api package Microsoft.AspNetCore.Mvc.NewtonsoftJson" }
    ],
    off: [
      "add an endpoint to cancel an order that hasn't shipped yet",
      "the ERP export writes the order as xml, add the customer reference field to it",
      "register health checks for the database and the rabbitmq connection",
      "explain the difference between IHostedService and BackgroundService",
      "any good podcasts about history?"
    ],
    drift: [
      "unrelated: the outbox worker sometimes publishes the same event twice",
      { read: "src/Orders.Worker/OutboxPublisher.cs" },
      "two replicas grab the same rows. fetch them with FOR UPDATE SKIP LOCKED",
      { edit: "src/Orders.Worker/OutboxPublisher.cs" },
      "integration test with two publishers running at once, use testcontainers for postgres",
      { write: "tests/Orders.Worker.Tests/OutboxConcurrencyTests.cs" },
      { bash: "dotnet test tests/Orders.Worker.Tests" }
    ]
  },
  {
    id: "fresh2-flutter-checkout-overflow",
    kind: "bug",
    goal: "Fix the checkout screen overflowing on small phones",
    cwd: "/home/dev/shop_app",
    work: [
      "on the iPhone SE and the small androids the pay page shows the yellow and black stripes at the bottom",
      "══╡ EXCEPTION CAUGHT BY RENDERING LIBRARY ╞══\nA RenderFlex overflowed by 86 pixels on the bottom.\nThe relevant error-causing widget was:\n  Column Column:file:///home/dev/shop_app/lib/features/checkout/checkout_page.dart:58:16",
      { read: "lib/features/checkout/checkout_page.dart" },
      "the Column stacks the address card, the summary and the pay button at fixed heights. put the content in a SingleChildScrollView and keep the button pinned at the bottom",
      { edit: "lib/features/checkout/checkout_page.dart" },
      "when the keyboard comes up for the promo code field it breaks again",
      "why is resizeToAvoidBottomInset false on the Scaffold? set it to true and check",
      { edit: "lib/features/checkout/checkout_page.dart" },
      "the summary rows are SizedBox(height: 48), let them size to their content so long product names can wrap",
      { read: "lib/features/checkout/widgets/order_summary.dart" },
      { edit: "lib/features/checkout/widgets/order_summary.dart" },
      "widget test that pumps it at 320x568 with a text scale of 1.3",
      { write: "test/features/checkout/checkout_page_test.dart" },
      "flutter test",
      { bash: "flutter test test/features/checkout" },
      "passes. run it on the small emulator so I can eyeball it",
      { bash: "flutter run -d emulator-5554" }
    ],
    off: [
      "add apple pay to the payment options",
      "the product images flicker when scrolling the catalog grid",
      "the cart badge doesn't update after removing an item",
      "should we use riverpod or bloc for new features?",
      "good stretches after a 10k run?"
    ],
    drift: [
      "different thing: pull to refresh on the orders list spins forever",
      { read: "lib/features/orders/orders_page.dart" },
      "onRefresh never completes, the future from the bloc isn't returned",
      { edit: "lib/features/orders/orders_page.dart" },
      "return it from loadOrders and add a test for the refresh",
      { write: "test/features/orders/orders_page_test.dart" },
      "flutter analyze",
      { bash: "flutter analyze" }
    ]
  },
  {
    id: "fresh2-phoenix-presence",
    kind: "feature",
    goal: "Show who's online in the team chat",
    cwd: "/home/dev/huddle",
    work: [
      "each room should list the members currently connected, use Phoenix.Presence",
      { read: "lib/huddle_web/live/room_live.ex" },
      "generate the presence module",
      { bash: "mix phx.gen.presence" },
      "add HuddleWeb.Presence to the supervision tree",
      { edit: "lib/huddle/application.ex" },
      "track the user in mount when connected?(socket), meta with the name and avatar url",
      { edit: "lib/huddle_web/live/room_live.ex" },
      "subscribe to the room topic and handle the diffs in handle_info",
      "** (FunctionClauseError) no function clause matching in HuddleWeb.RoomLive.handle_info/2\n    (huddle 0.1.0) lib/huddle_web/live/room_live.ex:64: HuddleWeb.RoomLive.handle_info(%Phoenix.Socket.Broadcast{topic: \"room:42\", event: \"presence_diff\", payload: %{...}}, #Phoenix.LiveView.Socket<...>)",
      "match on %Phoenix.Socket.Broadcast{event: \"presence_diff\"}",
      { edit: "lib/huddle_web/live/room_live.ex" },
      "render the avatars in the sidebar, the same user in two tabs shows once",
      { edit: "lib/huddle_web/live/room_live.html.heex" },
      "mix test",
      { bash: "mix test test/huddle_web/live/room_live_test.exs" },
      "add a test that a second connection shows up in the list and goes away when its process dies",
      { edit: "test/huddle_web/live/room_live_test.exs" },
      { bash: "mix test" }
    ],
    off: [
      "add typing indicators to the room",
      "messages with emoji get cut off in the push notification preview",
      "upgrade phoenix_live_view to 1.0, what breaks?",
      "how does the BEAM's preemptive scheduling work?",
      "what should I pack for a weekend camping trip"
    ],
    drift: [
      "hold on, uploading an image over 8MB crashes the liveview",
      { read: "lib/huddle_web/live/upload_component.ex" },
      "set max_file_size to 20MB in allow_upload and show the error to the user instead",
      { edit: "lib/huddle_web/live/upload_component.ex" },
      "and resize images on the server before storing them, add the image library",
      { edit: "mix.exs" },
      { bash: "mix deps.get" }
    ]
  },
  {
    id: "fresh2-vue-pinia",
    kind: "migration",
    goal: "Migrate the dashboard's state from Vuex to Pinia",
    cwd: "/home/dev/admin-dashboard",
    work: [
      "we're on vue 3 but still on vuex 4. port the store modules over one at a time",
      { bash: "npm i pinia" },
      { read: "src/store/index.ts" },
      { read: "src/store/modules/auth.ts" },
      "start with auth: defineStore with the setup syntax, mutations become plain assignments in actions",
      { write: "src/stores/auth.ts" },
      "the components that use mapGetters('auth', ...) should use useAuthStore + storeToRefs",
      { grep: "mapGetters\\('auth'|mapState\\('auth'", path: "src" },
      { edit: "src/components/UserMenu.vue" },
      { edit: "src/views/LoginView.vue" },
      "the router guard reads store.getters['auth/isLoggedIn'], switch it too. call useAuthStore inside the guard, not at module top",
      { edit: "src/router/index.ts" },
      "same for projects and notifications",
      { write: "src/stores/projects.ts" },
      { write: "src/stores/notifications.ts" },
      "vue-tsc",
      { bash: "npx vue-tsc --noEmit" },
      "src/views/ProjectsView.vue:37:22 - error TS2339: Property 'fetchAll' does not exist on type 'Store<\"projects\", {}, {}, { loadProjects(): Promise<void>; }>'.",
      "it's loadProjects now, fix the call site",
      { edit: "src/views/ProjectsView.vue" },
      "the unit tests still mount with the old store, give them createTestingPinia",
      { edit: "tests/unit/setup.ts" },
      { bash: "npx vitest run" },
      "all green. uninstall vuex and delete src/store",
      { bash: "npm uninstall vuex && rm -r src/store" }
    ],
    off: [
      "the projects table sorts the created dates as strings",
      "swap the charts from chart.js to echarts",
      "set up vue-i18n with german and french",
      "the notifications websocket reconnects in a tight loop when the token expires",
      "recommend a quiet mechanical keyboard"
    ],
    drift: [
      "btw the csv export on the projects page stops at 1000 rows",
      { grep: "exportCsv", path: "src" },
      { read: "src/utils/exportCsv.ts" },
      "it only exports the page the api returned, fetch all pages before building the file",
      { edit: "src/utils/exportCsv.ts" },
      "better stream it, some customers have 40k rows",
      "and show a progress toast while it runs"
    ]
  },
  {
    id: "fresh2-laravel-customer-import",
    kind: "feature",
    goal: "Let admins import customers from a CSV file",
    cwd: "/home/dev/crm",
    work: [
      "admins want to upload the client list from their old system as a spreadsheet and get them created in bulk. start with the route and a controller",
      { read: "routes/web.php" },
      { bash: "php artisan make:controller Admin/CustomerImportController" },
      { edit: "routes/web.php" },
      "validation: file required, mimes:csv,txt, max 10MB",
      { edit: "app/Http/Controllers/Admin/CustomerImportController.php" },
      "parse it in a queued job so 50k rows don't time out the request. chunks of 500, upsert on email",
      { bash: "php artisan make:job ImportCustomers" },
      { edit: "app/Jobs/ImportCustomers.php" },
      "collect bad rows with the line number and the reason instead of failing the whole file",
      { edit: "app/Jobs/ImportCustomers.php" },
      "we need a table to keep each upload's status and errors",
      { bash: "php artisan make:migration create_customer_imports_table" },
      { edit: "database/migrations/2024_05_14_101500_create_customer_imports_table.php" },
      { bash: "php artisan migrate" },
      "go on, the blade page with the upload form and the last 20 uploads with their status",
      { write: "resources/views/admin/customers/import.blade.php" },
      "feature test with a fixture file, run the queue sync in the test",
      { write: "tests/Feature/CustomerImportTest.php" },
      { bash: "php artisan test --filter=CustomerImportTest" },
      "SQLSTATE[23000]: Integrity constraint violation: 1048 Column 'country_code' cannot be null (Connection: mysql, SQL: insert into `customers` ...)",
      "default it to the team's country when that column is empty",
      { edit: "app/Jobs/ImportCustomers.php" },
      { bash: "php artisan test --filter=CustomerImportTest" }
    ],
    off: [
      "add an xlsx export of the customers list",
      "horizon shows a pile of failed jobs for the invoice mailer, why?",
      "customer search is slow at 200k rows, add a fulltext index",
      "what changes in the app skeleton with laravel 11?",
      "what's a realistic way to learn spanish in three months"
    ],
    drift: [
      "unrelated: the invoice pdfs show the euro sign as a question mark",
      { read: "app/Services/InvoicePdf.php" },
      "dompdf's default font has no €, use DejaVu Sans in the template",
      { edit: "resources/views/pdf/invoice.blade.php" },
      "regenerate last week's invoices",
      { bash: "php artisan invoices:regenerate --since=2024-05-06" }
    ]
  }
]
