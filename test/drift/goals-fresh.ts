import type { CorpusGoal } from "./corpus.ts"

/**
 * The fresh held-out set: written before the detector's generalisation work began, in stacks and
 * domains the rest of the corpus does not cover (Go, Rust, Java/Spring, data pipelines, mobile,
 * ML training, Terraform, game code, embedded). Never tuned on: the detector is measured on these
 * only to report. Do not edit a goal here after measuring on it.
 */
export const fresh: ReadonlyArray<CorpusGoal> = [
  {
    id: "fresh-go-grpc-deadline",
    kind: "bug",
    goal: "Fix the inventory gRPC client timing out under load",
    cwd: "/home/dev/inventory-svc",
    work: [
      "under load test the order service gets DeadlineExceeded from inventory after ~2s, find out why",
      { grep: "context.WithTimeout", path: "internal" },
      { read: "internal/inventoryclient/client.go" },
      "rpc error: code = DeadlineExceeded desc = context deadline exceeded\n  at inventoryclient.(*Client).Reserve client.go:88",
      "we create a new grpc.Dial per call?? that's the handshake cost",
      "reuse one conn, dial it once in New() and keep it on the struct",
      { edit: "internal/inventoryclient/client.go" },
      "also set keepalive params on the dialer",
      { bash: "go test ./internal/inventoryclient/..." },
      "go vet",
      { bash: "go vet ./..." },
      "rerun the k6 scenario against staging",
      { bash: "k6 run loadtest/reserve.js" },
      "p99 is 140ms now, no deadline errors. commit",
      { bash: "git commit -am 'Reuse the inventory gRPC connection'" }
    ],
    off: [
      "add a field for the warehouse id to the Reserve request proto",
      "what's the best way to learn piano as an adult",
      "rename the module path from github.com/acme/inv to github.com/acme/inventory",
      "draft a message asking for friday off",
      "explain how goroutine scheduling works in go 1.22"
    ],
    drift: [
      "btw the healthcheck endpoint returns 200 even when postgres is down",
      { read: "cmd/server/health.go" },
      "make it ping the db pool",
      { edit: "cmd/server/health.go" },
      "and add a readiness probe separate from liveness",
      "update the helm chart probes for that"
    ]
  },
  {
    id: "fresh-rust-cli-config",
    kind: "feature",
    goal: "Add a TOML config file to the Rust CLI",
    cwd: "/home/dev/logsift",
    work: [
      "users want to set defaults in ~/.config/logsift/config.toml instead of passing flags every time",
      { read: "src/main.rs" },
      { read: "Cargo.toml" },
      "add serde + toml crates",
      { bash: "cargo add serde --features derive && cargo add toml" },
      "make a Settings struct with the same fields as the clap Args, all Option",
      { write: "src/settings.rs" },
      "flags should override the file, file overrides built-in defaults",
      { edit: "src/main.rs" },
      "use the dirs crate for the path, XDG on linux",
      "cargo build",
      { bash: "cargo build" },
      "error[E0308]: mismatched types expected `PathBuf`, found `Option<PathBuf>` --> src/settings.rs:41:23",
      { edit: "src/settings.rs" },
      "add a test that loads a fixture file",
      { write: "tests/fixtures/config.toml" },
      { bash: "cargo test" },
      "clippy clean?",
      { bash: "cargo clippy -- -D warnings" }
    ],
    off: [
      "why is the regex matcher slow on 2GB files",
      "what's a good name for a golden retriever",
      "switch the output coloring from ansi_term to owo-colors",
      "summarise this article about the fed rate decision",
      "how do lifetimes work with async closures"
    ],
    drift: [
      "actually the --follow mode misses lines when the file rotates",
      { read: "src/follow.rs" },
      "watch the inode with notify and reopen on rename",
      { edit: "src/follow.rs" },
      "test it with logrotate in a loop"
    ]
  },
  {
    id: "fresh-spring-boot3-migration",
    kind: "migration",
    goal: "Migrate the payments service from Spring Boot 2.7 to Spring Boot 3",
    cwd: "/home/dev/payments",
    work: [
      "bump spring boot to 3.2 in the pom and see what breaks",
      { edit: "pom.xml" },
      { bash: "mvn -q compile" },
      "[ERROR] package javax.persistence does not exist",
      "jakarta namespace, replace javax.persistence and javax.validation imports everywhere",
      { bash: "grep -rl 'javax\\.' src/main/java | xargs sed -i 's/javax\\.persistence/jakarta.persistence/g; s/javax\\.validation/jakarta.validation/g'" },
      "WebSecurityConfigurerAdapter is gone, rewrite SecurityConfig with a SecurityFilterChain bean",
      { read: "src/main/java/com/acme/payments/config/SecurityConfig.java" },
      { edit: "src/main/java/com/acme/payments/config/SecurityConfig.java" },
      "antMatchers -> requestMatchers",
      "mvn verify",
      { bash: "mvn verify" },
      "the actuator prometheus endpoint moved? metrics test fails with 404 on /actuator/prometheus",
      "add micrometer-registry-prometheus explicitly",
      { edit: "pom.xml" },
      "green. update the Dockerfile base image to eclipse-temurin:21",
      { edit: "Dockerfile" }
    ],
    off: [
      "add an endpoint to refund part of a payment",
      "what's the capital of mongolia",
      "why does our stripe webhook get retried three times",
      "write a haiku about mondays",
      "compare kotlin coroutines and java virtual threads"
    ],
    drift: [
      "while we're at it the settlement report csv has the wrong decimal separator for german merchants",
      { read: "src/main/java/com/acme/payments/report/SettlementCsv.java" },
      "use Locale.ROOT for numbers in the csv",
      { edit: "src/main/java/com/acme/payments/report/SettlementCsv.java" },
      "and add the merchant vat id column"
    ]
  },
  {
    id: "fresh-airflow-dedupe",
    kind: "bug",
    goal: "Fix duplicate rows in the daily orders load to the warehouse",
    cwd: "/home/dev/data-pipelines",
    work: [
      "fct_orders has duplicates for 2026-11-20, the dag ran twice after a retry",
      { read: "dags/orders_daily.py" },
      { read: "sql/load_orders.sql" },
      "the load does INSERT INTO ... SELECT, so a retry appends again",
      "make it idempotent: delete the partition for ds first, or MERGE on order_id",
      "use MERGE, snowflake supports it",
      { edit: "sql/load_orders.sql" },
      "backfill 2026-11-20 to fix the existing dupes",
      { bash: "airflow dags backfill orders_daily -s 2026-11-20 -e 2026-11-20" },
      "select order_id, count(*) from fct_orders where ds='2026-11-20' group by 1 having count(*)>1",
      { bash: "snowsql -q \"select order_id, count(*) from analytics.fct_orders where ds='2026-11-20' group by 1 having count(*)>1\"" },
      "0 rows, good. add a dbt test for unique order_id",
      { edit: "models/marts/schema.yml" },
      { bash: "dbt test --select fct_orders" }
    ],
    off: [
      "add a dag that exports customers to hubspot",
      "how long should I boil an egg",
      "why is the clickstream sessionization model so slow",
      "translate this paragraph to spanish",
      "what is the difference between a data lake and a lakehouse"
    ],
    drift: [
      "separate thing: marketing wants a new model for weekly cohort retention",
      { write: "models/marts/cohort_retention.sql" },
      "cohort by first order week, retention by weeks since",
      "add it to the looker explore",
      { edit: "lookml/retention.view.lkml" }
    ]
  },
  {
    id: "fresh-ios-keychain-token",
    kind: "refactor",
    goal: "Move the iOS app's auth token storage from UserDefaults to the Keychain",
    cwd: "/home/dev/ios-app",
    work: [
      "we keep the access token in UserDefaults, that's bad, move it to keychain",
      { grep: "UserDefaults.standard", path: "App" },
      { read: "App/Auth/TokenStore.swift" },
      "wrap SecItemAdd / SecItemCopyMatching in a KeychainStore type, same API as TokenStore",
      { write: "App/Auth/KeychainStore.swift" },
      "kSecAttrAccessibleAfterFirstUnlock so background refresh still works",
      "migrate existing tokens on first launch then delete them from defaults",
      { edit: "App/Auth/TokenStore.swift" },
      "xcodebuild test",
      { bash: "xcodebuild test -scheme App -destination 'platform=iOS Simulator,name=iPhone 15'" },
      "errSecMissingEntitlement (-34018) in the unit tests",
      "the test host needs keychain sharing entitlement, add it to the test target",
      { edit: "App.xcodeproj/project.pbxproj" },
      "rerun the tests",
      { bash: "xcodebuild test -scheme App -destination 'platform=iOS Simulator,name=iPhone 15'" }
    ],
    off: [
      "add face id to unlock the app",
      "best hiking boots for wide feet",
      "the onboarding carousel stutters on iPhone SE",
      "write a limerick about a cat",
      "how does swiftui's @Observable differ from ObservableObject"
    ],
    drift: [
      "different thing, push notifications don't show when the app is in foreground",
      { read: "App/Notifications/NotificationDelegate.swift" },
      "implement willPresent and return banner and sound",
      { edit: "App/Notifications/NotificationDelegate.swift" },
      "also deep link to the order screen when tapped"
    ]
  },
  {
    id: "fresh-pytorch-resume",
    kind: "feature",
    goal: "Make training runs resumable from checkpoints",
    cwd: "/home/dev/vision-train",
    work: [
      "preempted spot instances lose the whole run, we need to resume from the last checkpoint",
      { read: "train.py" },
      "save model, optimizer, scheduler, scaler, epoch and step every N steps",
      { edit: "train.py" },
      "--resume flag that picks latest ckpt in the run dir",
      { write: "vision/checkpoint.py" },
      "RuntimeError: Error(s) in loading state_dict for ResNet: Missing key(s) in state_dict: \"fc.weight\". Unexpected key(s): \"module.fc.weight\"",
      "strip the module. prefix from DDP",
      { edit: "vision/checkpoint.py" },
      "also restore the RNG states so data order matches",
      "smoke test: train 50 steps, kill, resume, compare loss curve",
      { bash: "python train.py --config configs/smoke.yaml --max-steps 50 && python train.py --config configs/smoke.yaml --resume --max-steps 100" },
      "loss continues from 2.31, looks right",
      "write the atomic save (tmp file + rename) so a kill mid-save doesn't corrupt it",
      { edit: "vision/checkpoint.py" }
    ],
    off: [
      "try a cosine lr schedule with warmup instead of step decay",
      "recommend a sci-fi novel",
      "why is the dataloader the bottleneck, gpu util is 40%",
      "help me plan a birthday party for a 6 year old",
      "explain the difference between batchnorm and layernorm"
    ],
    drift: [
      "let's add mixup and cutmix augmentation now",
      { read: "vision/augment.py" },
      "alpha 0.2 for mixup, 1.0 for cutmix, switch prob 0.5",
      { edit: "vision/augment.py" },
      "log a grid of augmented samples to wandb"
    ]
  }
]
