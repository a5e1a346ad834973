import type { CorpusGoal } from "./corpus.ts"

/** The second fresh held-out set, continued (goals-fresh-two.ts says how it was written and used). */
export const moreFreshTwo: ReadonlyArray<CorpusGoal> = [
  {
    id: "fresh2-qt-thumbnail-loading",
    kind: "refactor",
    goal: "Move image loading in the Qt viewer off the UI thread",
    cwd: "/home/dev/photoview",
    work: [
      "opening a folder with 3000 raw files freezes the window for about 20 seconds, the decode runs inside MainWindow::openFolder",
      { read: "src/mainwindow.cpp" },
      { read: "src/thumbnailmodel.cpp" },
      "do the decode with QtConcurrent::run and a QFutureWatcher, hand the QImage back to the model on the main thread",
      { edit: "src/thumbnailmodel.cpp" },
      { edit: "src/thumbnailmodel.h" },
      "a QPixmap can't be made outside the gui thread, keep it a QImage until it reaches the model",
      "link Qt6::Concurrent in cmake",
      { edit: "CMakeLists.txt" },
      "build",
      { bash: "cmake --build build -j8" },
      "QObject::setParent: Cannot set parent, new parent is in a different thread",
      "the loader creates a QObject in the worker with the model as parent. don't, just return the data",
      { edit: "src/thumbnailloader.cpp" },
      "cancel the pending futures when the user switches to another folder",
      { edit: "src/thumbnailmodel.cpp" },
      "run ctest then open ~/Pictures/raw-test",
      { bash: "ctest --test-dir build --output-on-failure" },
      { bash: "./build/photoview ~/Pictures/raw-test" }
    ],
    off: [
      "rotate images according to their EXIF orientation",
      "the slideshow flickers between images on wayland",
      "add a cmake preset for the msvc build on windows",
      "std::shared_ptr vs QSharedPointer, which should we use?",
      "birthday gift ideas for a dad who likes fishing"
    ],
    drift: [
      "the crash reporter dialog comes up empty on windows, look at that",
      { read: "src/crash/crashdialog.cpp" },
      "the .ui file is never compiled in, AUTOUIC is off in that subdirectory",
      { edit: "src/crash/CMakeLists.txt" },
      "and make 'send report' attach the minidump",
      { edit: "src/crash/crashdialog.cpp" },
      { bash: "cmake --build build -j8" }
    ]
  },
  {
    id: "fresh2-ansible-edge-proxy",
    kind: "infrastructure",
    goal: "Write an Ansible role to provision the nginx reverse proxies",
    cwd: "/home/dev/ops-playbooks",
    work: [
      "the two edge boxes were set up by hand. codify them: install nginx, our vhosts, certbot",
      { bash: "ansible-galaxy role init roles/edge_proxy" },
      { read: "inventory/production.ini" },
      "tasks: apt install, then template one site config per upstream from a list in group_vars",
      { write: "roles/edge_proxy/tasks/main.yml" },
      { write: "roles/edge_proxy/templates/site.conf.j2" },
      { write: "inventory/group_vars/edge.yml" },
      "a handler that reloads, but only after nginx -t passes",
      { write: "roles/edge_proxy/handlers/main.yml" },
      "certbot with the webroot plugin and the systemd timer for renewal",
      { edit: "roles/edge_proxy/tasks/main.yml" },
      "dry run against edge-01",
      { bash: "ansible-playbook -i inventory/production.ini site.yml --limit edge-01 --check --diff" },
      "fatal: [edge-01]: FAILED! => {\"changed\": false, \"msg\": \"AnsibleUndefinedVariable: 'dict object' has no attribute 'port'\"}",
      "some upstreams don't set a port, default it to 80 in the template",
      { edit: "roles/edge_proxy/templates/site.conf.j2" },
      "molecule with the docker driver",
      { write: "roles/edge_proxy/molecule/default/molecule.yml" },
      { bash: "cd roles/edge_proxy && molecule test" },
      "the diff on edge-01 is whitespace only. apply there, then edge-02",
      { bash: "ansible-playbook -i inventory/production.ini site.yml --limit edge-01" },
      { bash: "ansible-playbook -i inventory/production.ini site.yml --limit edge-02" }
    ],
    off: [
      "add the three new app servers to the inventory and the monitoring group",
      "the postgres backup playbook fails on the vault password lookup",
      "rotate the deploy user's ssh keys on every host",
      "ansible vs salt for a team of four, thoughts?",
      "how do I keep a sourdough starter alive while on vacation"
    ],
    drift: [
      "btw the disk usage alert for db-02 is firing",
      { bash: "ssh db-02 'df -h; sudo du -sh /var/log/* | sort -h | tail'" },
      "journald is at 14G, cap it at 2G with SystemMaxUse in the common role",
      { edit: "roles/common/templates/journald.conf.j2" },
      "roll that out to all hosts",
      { bash: "ansible-playbook -i inventory/production.ini site.yml --tags journald" }
    ]
  },
  {
    id: "fresh2-spark-sessionize-dataframes",
    kind: "refactor",
    goal: "Rewrite the sessionization Spark job from RDDs to DataFrames",
    cwd: "/home/dev/clickstream-jobs",
    work: [
      "SessionizeJob still does groupByKey on an RDD of events. port it to window functions, the output has to stay identical",
      { read: "src/main/scala/com/acme/clickstream/SessionizeJob.scala" },
      "lag over (partitionBy userId orderBy ts), a new session when the gap is over 30 min, then a running sum for the session index",
      { edit: "src/main/scala/com/acme/clickstream/SessionizeJob.scala" },
      "keep the Event case class and .as[Event] so it stays typed",
      "sbt compile",
      { bash: "sbt compile" },
      "[error] /home/dev/clickstream-jobs/src/main/scala/com/acme/clickstream/SessionizeJob.scala:48:31: value $ is not a member of StringContext",
      "missing import spark.implicits._",
      { edit: "src/main/scala/com/acme/clickstream/SessionizeJob.scala" },
      "diff the output against the old job for one day",
      { bash: "spark-submit --class com.acme.clickstream.CompareSessions target/scala-2.12/clickstream-jobs-assembly-1.4.0.jar --date 2024-06-03" },
      "3 sessions differ, all events with the exact same ts. order by ts then event_id so it's deterministic",
      { edit: "src/main/scala/com/acme/clickstream/SessionizeJob.scala" },
      "run the unit tests",
      { bash: "sbt test" },
      "the old one took 41 min on the cluster. print the physical plan and check for extra shuffles",
      { bash: "sbt 'runMain com.acme.clickstream.SessionizeJob --date 2024-06-03 --explain'" }
    ],
    off: [
      "add a device_type column to the sessions output",
      "the daily attribution job OOMs on the executors since last week",
      "move the jobs from spark 3.3 to 3.5",
      "parquet or orc for the raw events, what's the difference?",
      "how do I clean a rusty cast iron pan"
    ],
    drift: [
      "different thing: the airflow sensor for the raw events partition times out every monday",
      { read: "dags/clickstream_daily.py" },
      "the weekend compaction lands at 06:30 on mondays. longer timeout and mode=reschedule",
      { edit: "dags/clickstream_daily.py" },
      "and send sla misses to #data-alerts instead of email",
      { edit: "dags/clickstream_daily.py" }
    ]
  },
  {
    id: "fresh2-electron-deep-links",
    kind: "bug",
    goal: "Fix deep links not opening the desktop app on Windows",
    cwd: "/home/dev/notes-desktop",
    work: [
      "clicking a notesapp:// url in the browser on windows starts a second window instead of focusing the running one, and the note never opens. mac is fine",
      { read: "src/main/index.ts" },
      "mac gets the open-url event, windows hands the url to the second instance in argv",
      "requestSingleInstanceLock, then handle second-instance and pull the url out of commandLine",
      { edit: "src/main/index.ts" },
      "also a cold start: then it's in process.argv of the first launch",
      { edit: "src/main/index.ts" },
      "in dev setAsDefaultProtocolClient needs process.execPath and the script path as args",
      { grep: "setAsDefaultProtocolClient", path: "src" },
      { edit: "src/main/protocol.ts" },
      "does the nsis installer register the scheme? check the electron-builder config",
      { read: "electron-builder.yml" },
      { edit: "electron-builder.yml" },
      "build the windows installer",
      { bash: "npx electron-builder --win --x64" },
      "installed it on the vm: focus works now but the renderer gets the url before it's ready. queue it until did-finish-load",
      { edit: "src/main/index.ts" },
      "unit test for the url parsing",
      { write: "src/main/deeplink.test.ts" },
      { bash: "npx vitest run src/main" }
    ],
    off: [
      "add a tray icon with a quick-note shortcut",
      "the app sits at 900MB after a day open, is the renderer leaking?",
      "set up signing and notarization for the mac build in CI",
      "how does contextIsolation work with preload scripts?",
      "how do I keep houseplants alive through winter"
    ],
    drift: [
      "while I remember: spellcheck underlines everything in red for german users",
      { grep: "spellcheck|setSpellCheckerLanguages", path: "src" },
      "set the spellchecker languages from app.getPreferredSystemLanguages()",
      { edit: "src/main/window.ts" },
      "and a setting in preferences to choose them",
      { edit: "src/renderer/settings/Preferences.tsx" }
    ]
  },
  {
    id: "fresh2-sveltekit-recipe-search",
    kind: "feature",
    goal: "Add search with filters to the recipes page",
    cwd: "/home/dev/recipe-site",
    work: [
      "people want to find dishes by text and narrow by cuisine and cook time. keep the query in the url so links are shareable",
      { read: "src/routes/recipes/+page.server.ts" },
      { read: "src/routes/recipes/+page.svelte" },
      "read q, cuisine and maxTime from url.searchParams in load and pass them to the db query",
      { edit: "src/routes/recipes/+page.server.ts" },
      "postgres full text, websearch_to_tsquery over title and ingredients",
      { edit: "src/lib/server/recipes.ts" },
      "a GET form so it works without js, then enhance: goto with keepFocus on input, debounced 300ms",
      { edit: "src/routes/recipes/+page.svelte" },
      "cuisine as checkboxes, several allowed, so getAll",
      { edit: "src/routes/recipes/+page.server.ts" },
      "npm run check",
      { bash: "npm run check" },
      "Error: Type 'string | null' is not assignable to type 'string'. (ts)\n  src/routes/recipes/+page.svelte:41:5",
      { edit: "src/routes/recipes/+page.svelte" },
      "it needs a GIN index on the tsvector or it'll crawl",
      { write: "migrations/0019_recipes_search_index.sql" },
      "playwright: type 'curry', tick thai, the url updates and the list shrinks",
      { write: "tests/recipes-search.test.ts" },
      { bash: "npx playwright test tests/recipes-search.test.ts" }
    ],
    off: [
      "add a print-friendly layout for a single recipe",
      "image upload on the new recipe form fails above 4MB on vercel",
      "switch from adapter-auto to adapter-node for the docker deploy",
      "let users save recipes to their favourites",
      "how long should a steak rest after grilling"
    ],
    drift: [
      "actually the rss feed of new recipes is empty in production",
      { read: "src/routes/rss.xml/+server.ts" },
      "it's prerendered, so it was built against an empty db. turn prerender off and cache it for an hour with a header",
      { edit: "src/routes/rss.xml/+server.ts" },
      "and put the recipe photo in as an enclosure",
      { edit: "src/routes/rss.xml/+server.ts" }
    ]
  },
  {
    id: "fresh2-postgres-replica-runbook",
    kind: "docs",
    goal: "Write a runbook for Postgres replica lag",
    cwd: "/home/dev/dba-runbooks",
    work: [
      "on-call got paged last night for the standby falling behind and nobody knew what to check. we need docs/runbooks/replication-lag.md",
      { read: "docs/runbooks/README.md" },
      { read: "docs/runbooks/disk-full.md" },
      "same structure as disk-full: symptoms, first checks, causes, fixes, escalation",
      { write: "docs/runbooks/replication-lag.md" },
      "first checks: pg_stat_replication on the primary with write_lag/flush_lag/replay_lag, and now() - pg_last_xact_replay_timestamp() on the standby",
      "run them on staging so the sample output in there is real",
      { bash: "psql -h pg-staging-primary -c 'select application_name, state, write_lag, flush_lag, replay_lag from pg_stat_replication'" },
      { bash: "psql -h pg-staging-replica -c 'select now() - pg_last_xact_replay_timestamp() as delay'" },
      "causes: long queries on the standby with hot_standby_feedback, wal_keep_size too small, the network, a big index build or vacuum full on the primary",
      { edit: "docs/runbooks/replication-lag.md" },
      "what to do when the slot is gone and the replica has to be rebuilt with pg_basebackup, step by step with the flags our script uses",
      { grep: "pg_basebackup", path: "scripts" },
      { read: "scripts/rebuild-replica.sh" },
      { edit: "docs/runbooks/replication-lag.md" },
      "link the grafana panel and name the alert, PostgresReplicationLagHigh",
      { edit: "docs/runbooks/replication-lag.md" },
      "add it to the index and run the link checker",
      { edit: "docs/runbooks/README.md" },
      { bash: "npx markdown-link-check docs/runbooks/replication-lag.md" }
    ],
    off: [
      "the invoices query went from 40ms to 3s after yesterday's deploy, look at the plan",
      "autovacuum never finishes on the events table, what's holding it back?",
      "put pgbouncer in transaction mode in front of the api",
      "plan the upgrade of the primary from pg 14 to 16 with pg_upgrade",
      "what's a nice leaving gift for a coworker"
    ],
    drift: [
      "hm, while I'm in psql: the sessions table is 80GB and mostly dead tuples",
      { bash: "psql -h pg-prod-primary -c 'select relname, n_dead_tup, last_autovacuum from pg_stat_user_tables order by n_dead_tup desc limit 10'" },
      "lower autovacuum_vacuum_scale_factor to 0.02 on that table",
      { bash: "psql -h pg-prod-primary -c 'alter table sessions set (autovacuum_vacuum_scale_factor = 0.02)'" },
      "and a cron job that deletes expired sessions in batches of 10k",
      { write: "scripts/purge-expired-sessions.sh" }
    ]
  }
]
