import type { CorpusGoal } from "./corpus.ts"

/** More of the fresh held-out set (goals-fresh.ts): never tuned on, not edited after measuring. */
export const moreFresh: ReadonlyArray<CorpusGoal> = [
  {
    id: "fresh-terraform-rds-module",
    kind: "infrastructure",
    goal: "Move the RDS database into a reusable Terraform module",
    cwd: "/home/dev/infra",
    work: [
      "the postgres instance is defined inline in envs/prod/main.tf and copy-pasted in staging, pull it into modules/rds",
      { read: "envs/prod/main.tf" },
      { read: "envs/staging/main.tf" },
      { write: "modules/rds/main.tf" },
      { write: "modules/rds/variables.tf" },
      "outputs for endpoint, port and the security group id",
      { write: "modules/rds/outputs.tf" },
      "use moved blocks so terraform doesn't destroy and recreate the instance",
      { edit: "envs/prod/main.tf" },
      "terraform plan in prod",
      { bash: "cd envs/prod && terraform init -upgrade && terraform plan" },
      "Plan: 0 to add, 1 to change, 0 to destroy. what's the change",
      "the parameter group name differs, pass it through as a variable",
      { edit: "modules/rds/variables.tf" },
      "plan again",
      { bash: "cd envs/prod && terraform plan" },
      "no changes. do staging the same way"
    ],
    off: [
      "add a cloudfront distribution in front of the assets bucket",
      "what should I cook for dinner tonight",
      "why does the EKS node group take 20 minutes to update",
      "write a toast for my brother's wedding",
      "explain the difference between terraform and pulumi"
    ],
    drift: [
      "the nat gateway bill is huge this month, can we look",
      { read: "modules/vpc/main.tf" },
      "add vpc endpoints for s3 and ecr so that traffic skips the nat",
      { edit: "modules/vpc/main.tf" },
      "and a budget alarm at 500 usd"
    ]
  },
  {
    id: "fresh-unity-jump-buffer",
    kind: "bug",
    goal: "Fix the player sometimes not jumping when the button is pressed",
    cwd: "/home/dev/platformer",
    work: [
      "playtesters say pressing A right before landing does nothing",
      { read: "Assets/Scripts/Player/PlayerController.cs" },
      "isGrounded is checked in FixedUpdate but input is read in Update, so presses between physics ticks get lost",
      "add a jump buffer, 0.1s",
      { edit: "Assets/Scripts/Player/PlayerController.cs" },
      "and coyote time while we're on it, 0.08s after leaving a ledge",
      "expose both as serialized fields so design can tweak",
      { edit: "Assets/Scripts/Player/PlayerController.cs" },
      "NullReferenceException: Object reference not set to an instance of an object PlayerController.FixedUpdate () (at Assets/Scripts/Player/PlayerController.cs:74)",
      "groundCheck isn't assigned on the prefab",
      { edit: "Assets/Prefabs/Player.prefab" },
      "run the playmode tests",
      { bash: "unity -batchmode -runTests -testPlatform PlayMode -projectPath ." },
      "all pass"
    ],
    off: [
      "add a double jump power-up",
      "what's a good stretching routine for back pain",
      "the level 3 tilemap has seams between tiles",
      "write a bedtime story about a dragon",
      "how does unity's new input system compare to the old one"
    ],
    drift: [
      "different bug: the pause menu doesn't stop the music",
      { read: "Assets/Scripts/UI/PauseMenu.cs" },
      "set AudioListener.pause when time scale is zero",
      { edit: "Assets/Scripts/UI/PauseMenu.cs" },
      "and add a volume slider in the pause menu"
    ]
  },
  {
    id: "fresh-firmware-uart-dma",
    kind: "refactor",
    goal: "Switch the sensor UART driver from interrupts to DMA",
    cwd: "/home/dev/sensor-fw",
    work: [
      "at 921600 baud the rx isr can't keep up and we drop bytes, move uart2 rx to dma with idle line detection",
      { read: "Core/Src/uart_sensor.c" },
      { read: "Core/Src/stm32f4xx_it.c" },
      "circular buffer of 512 bytes, HAL_UARTEx_ReceiveToIdle_DMA",
      { edit: "Core/Src/uart_sensor.c" },
      "handle the half-transfer and the idle callback, both give us the new head position",
      { edit: "Core/Src/stm32f4xx_it.c" },
      "make",
      { bash: "make -j4" },
      "undefined reference to `hdma_usart2_rx'",
      "declare it extern in main.h and init it in MX_DMA_Init",
      { edit: "Core/Inc/main.h" },
      "flash and run the loopback test",
      { bash: "st-flash write build/sensor-fw.bin 0x8000000 && python tools/uart_loopback.py --baud 921600 --seconds 60" },
      "0 bytes lost in 60s. remove the old rx isr code"
    ],
    off: [
      "add a CRC to the sensor frames",
      "how do I get red wine out of a carpet",
      "the i2c temperature sensor reads 0 after wakeup from stop mode",
      "write a short poem about autumn",
      "what's the difference between freertos queues and stream buffers"
    ],
    drift: [
      "also the watchdog resets us during flash writes",
      { read: "Core/Src/flash_store.c" },
      "kick the iwdg between page erases",
      { edit: "Core/Src/flash_store.c" },
      "and log the reset cause on boot"
    ]
  },
  {
    id: "fresh-android-compose-settings",
    kind: "migration",
    goal: "Migrate the Android settings screen from XML layouts to Jetpack Compose",
    cwd: "/home/dev/android-app",
    work: [
      "port SettingsFragment to compose, keep the same viewmodel",
      { read: "app/src/main/java/com/acme/app/settings/SettingsFragment.kt" },
      { read: "app/src/main/res/layout/fragment_settings.xml" },
      "make a SettingsScreen composable with a LazyColumn of preference rows",
      { write: "app/src/main/java/com/acme/app/settings/SettingsScreen.kt" },
      "switches for notifications and dark theme, a row that opens the language picker",
      "collect the viewmodel's StateFlow with collectAsStateWithLifecycle",
      { edit: "app/src/main/java/com/acme/app/settings/SettingsScreen.kt" },
      "host it in the fragment with ComposeView for now",
      { edit: "app/src/main/java/com/acme/app/settings/SettingsFragment.kt" },
      "./gradlew assembleDebug",
      { bash: "./gradlew assembleDebug" },
      "e: Unresolved reference: collectAsStateWithLifecycle",
      "add lifecycle-runtime-compose to the version catalog",
      { edit: "gradle/libs.versions.toml" },
      "write a compose ui test for toggling notifications",
      { write: "app/src/androidTest/java/com/acme/app/settings/SettingsScreenTest.kt" },
      "delete the old xml layout"
    ],
    off: [
      "add biometric login",
      "what are the rules of cricket",
      "the app crashes on android 14 when asking for the notification permission",
      "write a cover letter for a barista job",
      "explain kotlin flows vs livedata"
    ],
    drift: [
      "now the home feed, it jumps when images load",
      { read: "app/src/main/java/com/acme/app/feed/FeedAdapter.kt" },
      "give the image views a fixed aspect ratio from the api's width/height",
      { edit: "app/src/main/java/com/acme/app/feed/FeedAdapter.kt" },
      "and prefetch the next page earlier"
    ]
  },
  {
    id: "fresh-kafka-consumer-docs",
    kind: "docs",
    goal: "Document how to run and operate the events consumer",
    cwd: "/home/dev/events-consumer",
    work: [
      "there's no doc for this service, write docs/operations.md: what it consumes, config, how to run locally",
      { read: "src/main/resources/application.yml" },
      { read: "docker-compose.yml" },
      { write: "docs/operations.md" },
      "list every env var with its default, take them from application.yml",
      "add a section on replaying a topic from an offset: kafka-consumer-groups --reset-offsets",
      { edit: "docs/operations.md" },
      "and what the lag alert means and what to do when it fires",
      "link it from the README",
      { edit: "README.md" },
      "check the local run instructions actually work",
      { bash: "docker compose up -d && ./gradlew bootRun" },
      "the step about creating topics is missing, add it",
      { edit: "docs/operations.md" },
      "markdownlint",
      { bash: "npx markdownlint-cli2 docs/operations.md README.md" }
    ],
    off: [
      "add a dead letter topic for events that fail to parse",
      "tips for sleeping better",
      "why is consumer lag growing on partition 7 only",
      "write a short story about a lighthouse keeper",
      "what's the difference between at-least-once and exactly-once in kafka"
    ],
    drift: [
      "hm, bump the kafka client to 3.7 while I remember",
      { edit: "build.gradle.kts" },
      "./gradlew test",
      { bash: "./gradlew test" },
      "fix the deprecation warnings about poll(long)"
    ]
  },
  {
    id: "fresh-go-ci-cache",
    kind: "infrastructure",
    goal: "Cut the Go monorepo's GitHub Actions build time",
    cwd: "/home/dev/platform",
    work: [
      "ci takes 18 minutes, most of it is go build and downloading modules",
      { read: ".github/workflows/ci.yml" },
      "setup-go has cache: true but the key is per go.sum and we have 14 of them",
      "set cache-dependency-path to **/go.sum",
      { edit: ".github/workflows/ci.yml" },
      "cache the build cache too, GOCACHE",
      "split lint and test into parallel jobs",
      { edit: ".github/workflows/ci.yml" },
      "run golangci-lint with --new-from-rev on PRs only",
      "push and see the timing",
      { bash: "git push origin ci-speed" },
      { bash: "gh run watch" },
      "9 minutes. the integration job still downloads docker images every time",
      "use a matrix to shard the test packages by directory",
      { edit: ".github/workflows/ci.yml" }
    ],
    off: [
      "add a release workflow that builds binaries with goreleaser",
      "what's the weather like in lisbon in april",
      "refactor the config package to use functional options",
      "write a funny slack status",
      "explain how go modules resolve minimal versions"
    ],
    drift: [
      "unrelated: the billing service leaks goroutines on shutdown",
      { read: "services/billing/main.go" },
      "cancel the context and wait on the errgroup",
      { edit: "services/billing/main.go" },
      "add goleak to its tests"
    ]
  }
]
