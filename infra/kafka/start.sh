#!/usr/bin/env bash
# Start a single-node Apache Kafka broker (KRaft combined mode) on loopback for
# development, tests and CI. The broker jars come from Maven Central through
# `mvn`, because that is the only place our machines can download Kafka from
# (the release tarballs on the Apache mirrors are out of reach).
#
# Environment (all optional):
#   KAFKA_VERSION          org.apache.kafka:kafka_2.13 version   (default below)
#   KAFKA_CACHE_DIR        jar cache root   (default $HOME/.cache/signal-engine/kafka)
#   KAFKA_DATA_DIR         broker state, config, pid, log   (default <repo>/.data/kafka)
#   KAFKA_PORT             client listener on 127.0.0.1   (default 9092)
#   KAFKA_CONTROLLER_PORT  KRaft controller listener on 127.0.0.1   (default 9093)
#   KAFKA_ADVERTISED_PORT  the port clients are told to connect to   (default KAFKA_PORT;
#                          another one puts a proxy in front, as a test of cut connections does)
#   KAFKA_START_TIMEOUT    seconds to wait for readiness   (default 120)
#   KAFKA_HEAP_OPTS        JVM heap flags   (default "-Xms256m -Xmx1g")
set -euo pipefail

# 4.4.0 is listed on Central but its kafka-tools-api artifact is missing, so the
# broker cannot be resolved; 4.3.1 is the newest 4.x that resolves completely.
KAFKA_VERSION="${KAFKA_VERSION:-4.3.1}"
# The log4j-core that kafka-server 4.3.1 depends on. Kafka's poms carry no
# slf4j binding (the release tarball adds one), so start.sh adds it.
LOG4J_VERSION="${KAFKA_LOG4J_VERSION:-2.25.4}"

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_DIR="$(cd "$SCRIPT_DIR/../.." && pwd)"
CACHE_ROOT="${KAFKA_CACHE_DIR:-$HOME/.cache/signal-engine/kafka}"
VERSION_DIR="$CACHE_ROOT/$KAFKA_VERSION"
LIBS_DIR="$VERSION_DIR/libs"
MARKER="$VERSION_DIR/libs.pom.xml"
DATA_DIR="${KAFKA_DATA_DIR:-$REPO_DIR/.data/kafka}"
PORT="${KAFKA_PORT:-9092}"
CONTROLLER_PORT="${KAFKA_CONTROLLER_PORT:-9093}"
ADVERTISED_PORT="${KAFKA_ADVERTISED_PORT:-$PORT}"
TIMEOUT="${KAFKA_START_TIMEOUT:-120}"
HEAP_OPTS="${KAFKA_HEAP_OPTS:--Xms256m -Xmx1g}"
HOST=127.0.0.1

PID_FILE="$DATA_DIR/kafka.pid"
LOG_FILE="$DATA_DIR/kafka.log"
CONFIG="$DATA_DIR/server.properties"
LOG4J_CONFIG="$DATA_DIR/log4j2.properties"
LOG_DIRS="$DATA_DIR/kraft"

log() { echo "kafka: $*"; }
die() { echo "kafka: error: $*" >&2; exit 1; }

# Elapsed seconds with one decimal since a ${EPOCHREALTIME/./} stamp (bash 5),
# so no awk/bc is needed on a bare CI image.
now_us() { echo "${EPOCHREALTIME/./}"; }
elapsed() {
  local d=$(( ($(now_us) - $1) / 100000 ))
  echo "$((d / 10)).$((d % 10))s"
}

port_open() { (exec 3<>"/dev/tcp/$HOST/$1") 2>/dev/null; }

# A pid file can outlive its process and the pid can be reused, so only trust
# it when the process is still a Kafka broker.
kafka_pid() {
  [[ -f "$PID_FILE" ]] || return 1
  local pid
  pid="$(cat "$PID_FILE")"
  [[ "$pid" =~ ^[0-9]+$ ]] && kill -0 "$pid" 2>/dev/null || return 1
  if [[ -r "/proc/$pid/cmdline" ]]; then
    tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q 'kafka\.Kafka' || return 1
  fi
  echo "$pid"
}

# Shows why startup failed, then stops the broker: a half-started JVM left
# behind would hold the ports and break the next attempt (notably in CI).
fail_with_log() {
  echo "kafka: error: $*" >&2
  if [[ -f "$LOG_FILE" ]]; then
    echo "---- last 60 lines of $LOG_FILE ----" >&2
    tail -n 60 "$LOG_FILE" >&2
    echo "----" >&2
  fi
  KAFKA_DATA_DIR="$DATA_DIR" KAFKA_WIPE=0 "$SCRIPT_DIR/stop.sh" >&2 || true
  exit 1
}

command -v java >/dev/null || die "java not found (Kafka $KAFKA_VERSION needs Java 17+)"

# ---------------------------------------------------------------- already up?
mkdir -p "$DATA_DIR"
if pid="$(kafka_pid)"; then
  if port_open "$PORT"; then
    log "already running (pid $pid) on $HOST:$PORT"
    exit 0
  fi
  # Alive but not listening yet: most likely a concurrent start.sh, so fall
  # through to the readiness wait instead of starting a second JVM.
  log "pid $pid is starting up; waiting for it"
else
  rm -f "$PID_FILE"
  pid=""
  # Kafka would die on bind anyway; failing here gives a clearer message.
  for p in "$PORT" "$CONTROLLER_PORT"; do
    if port_open "$p"; then
      die "port $p on $HOST is taken by another process (set KAFKA_PORT / KAFKA_CONTROLLER_PORT)"
    fi
  done
fi

# ---------------------------------------------------------------- fetch jars
# kafka_2.13 (the `kafka.Kafka` entry point and kafka.tools.StorageTool)
# already depends on kafka-server, -storage, -metadata, -raft and the
# coordinators. kafka-tools is deliberately left out: it drags in
# connect-runtime (Jetty, Jersey) and the broker does not need it.
# log4j-slf4j-impl binds Kafka's slf4j 1.7 API to log4j-core; without it the
# broker logs nothing at all. All three log4j jars are declared directly so
# Maven's nearest-wins mediation cannot mix log4j versions.
# The plugin version is pinned because Maven 3.8's super POM still defaults to
# maven-dependency-plugin 2.8 from 2014.
POM="$(cat <<EOF
<?xml version="1.0" encoding="UTF-8"?>
<project xmlns="http://maven.apache.org/POM/4.0.0">
  <modelVersion>4.0.0</modelVersion>
  <groupId>local.signal-engine</groupId>
  <artifactId>kafka-runtime</artifactId>
  <version>$KAFKA_VERSION</version>
  <packaging>pom</packaging>
  <dependencies>
    <dependency>
      <groupId>org.apache.kafka</groupId>
      <artifactId>kafka_2.13</artifactId>
      <version>$KAFKA_VERSION</version>
    </dependency>
    <dependency>
      <groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-slf4j-impl</artifactId>
      <version>$LOG4J_VERSION</version>
    </dependency>
    <dependency>
      <groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-core</artifactId>
      <version>$LOG4J_VERSION</version>
    </dependency>
    <dependency>
      <groupId>org.apache.logging.log4j</groupId>
      <artifactId>log4j-api</artifactId>
      <version>$LOG4J_VERSION</version>
    </dependency>
  </dependencies>
  <build>
    <plugins>
      <plugin>
        <groupId>org.apache.maven.plugins</groupId>
        <artifactId>maven-dependency-plugin</artifactId>
        <version>3.8.1</version>
      </plugin>
    </plugins>
  </build>
</project>
EOF
)"

t0="$(now_us)"
# The marker is the pom the libs were resolved from, written only after a
# complete fetch, so an interrupted fetch or a changed dependency list
# (e.g. another KAFKA_LOG4J_VERSION) triggers a new one.
if [[ -d "$LIBS_DIR" && -f "$MARKER" && "$(cat "$MARKER")" == "$POM" ]]; then
  log "fetched in $(elapsed "$t0") (cached $KAFKA_VERSION)"
else
  command -v mvn >/dev/null || die "mvn not found (needed once to fetch Kafka $KAFKA_VERSION)"
  log "fetching Kafka $KAFKA_VERSION and its dependencies from Maven Central"
  mkdir -p "$VERSION_DIR"
  work="$(mktemp -d "$VERSION_DIR/.fetch.XXXXXX")"
  trap 'rm -rf "$work"' EXIT
  printf '%s\n' "$POM" >"$work/pom.xml"
  # Output goes to a file and is shown only on failure: even with -q, Maven 3.8
  # prints stray ANSI reset codes on both streams.
  if ! mvn -B -Dstyle.color=never -f "$work/pom.xml" dependency:copy-dependencies \
      -DincludeScope=runtime -DoutputDirectory="$work/libs" >"$work/mvn.log" 2>&1; then
    grep -m 1 -E '^\[ERROR\] [^ ]' "$work/mvn.log" >&2 || true
    die "mvn could not fetch Kafka $KAFKA_VERSION (is that version complete on Maven Central?)"
  fi
  # Swap the directory in whole so readers never see a half-filled libs/.
  rm -rf "$LIBS_DIR" "$MARKER"
  mv "$work/libs" "$LIBS_DIR"
  mv "$work/pom.xml" "$MARKER"
  rm -rf "$work"
  trap - EXIT
  jars=("$LIBS_DIR"/*.jar)
  log "fetched in $(elapsed "$t0") (${#jars[@]} jars, $(du -sh "$LIBS_DIR" | cut -f1))"
fi

# ---------------------------------------------------------------- start
t0="$(now_us)"
if [[ -z "$pid" ]]; then
  # Regenerated on every start so port changes apply; the cluster identity
  # lives in $LOG_DIRS/meta.properties, not here.
  # controller.quorum.voters (a static quorum) is used instead of the dynamic
  # `format --standalone` quorum because the latter records the controller
  # endpoint at format time, which would break a later KAFKA_CONTROLLER_PORT
  # change.
  cat >"$CONFIG" <<EOF
# Generated by infra/kafka/start.sh; edits are overwritten on the next start.
process.roles=broker,controller
node.id=1
controller.quorum.voters=1@$HOST:$CONTROLLER_PORT
listeners=PLAINTEXT://$HOST:$PORT,CONTROLLER://$HOST:$CONTROLLER_PORT
advertised.listeners=PLAINTEXT://$HOST:$ADVERTISED_PORT
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT
inter.broker.listener.name=PLAINTEXT
controller.listener.names=CONTROLLER
log.dirs=$LOG_DIRS

# One broker: every internal topic must live with a single replica.
offsets.topic.replication.factor=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
share.coordinator.state.topic.replication.factor=1
share.coordinator.state.topic.min.isr=1
# Internal topics are created on first use (consumer group, transactional
# producer); with the default 50 partitions each, that first use waits
# noticeably. A dev broker needs few.
offsets.topic.num.partitions=4
transaction.state.log.num.partitions=4

# The application creates its own topics; a typo must not silently create one.
auto.create.topics.enable=false
# Tests start consumer groups constantly; the 3 s default delay only slows them.
group.initial.rebalance.delay.ms=0
EOF

  # Kafka 4 reads log4j2 config only; without one, log4j prints a "no
  # configuration" warning and only errors. Console output goes to kafka.log.
  cat >"$LOG4J_CONFIG" <<'EOF'
# Generated by infra/kafka/start.sh.
status = warn
appender.console.type = Console
appender.console.name = STDOUT
appender.console.layout.type = PatternLayout
appender.console.layout.pattern = [%d] %p %m (%c)%n
rootLogger.level = info
rootLogger.appenderRef.stdout.ref = STDOUT
# Per-request and per-partition-state chatter drowns out the useful lines.
logger.request.name = kafka.request.logger
logger.request.level = warn
logger.statechange.name = state.change.logger
logger.statechange.level = warn
EOF

  CP="$LIBS_DIR/*"
  if [[ ! -f "$LOG_DIRS/meta.properties" ]]; then
    # Cluster ids are 16 random bytes in unpadded base64url; one starting with
    # '-' would be read as a CLI flag, which is why Kafka's own generator
    # avoids them too.
    cluster_id="-"
    while [[ "$cluster_id" == -* ]]; do
      cluster_id="$(head -c 16 /dev/urandom | base64 | tr '+/' '-_' | tr -d '=')"
    done
    java -cp "$CP" -Dlog4j2.configurationFile="$LOG4J_CONFIG" \
      kafka.tools.StorageTool format --ignore-formatted \
      --cluster-id "$cluster_id" --config "$CONFIG" >"$DATA_DIR/format.log" 2>&1 \
      || { cat "$DATA_DIR/format.log" >&2; die "formatting $LOG_DIRS failed"; }
    log "formatted $LOG_DIRS (cluster id $cluster_id)"
  fi

  if [[ -f "$LOG_FILE" ]]; then mv -f "$LOG_FILE" "$LOG_FILE.prev"; fi
  # setsid detaches the broker from this shell's session, so Ctrl-C in the
  # terminal or the end of a CI step does not take it down with it.
  # shellcheck disable=SC2086 # HEAP_OPTS is a list of flags
  setsid java $HEAP_OPTS \
    -XX:+UseG1GC -XX:MaxGCPauseMillis=20 -XX:+ExitOnOutOfMemoryError \
    -Djava.awt.headless=true \
    -Dlog4j2.configurationFile="$LOG4J_CONFIG" \
    -Dkafka.logs.dir="$DATA_DIR" \
    -cp "$CP" kafka.Kafka "$CONFIG" </dev/null >"$LOG_FILE" 2>&1 &
  pid=$!
  echo "$pid" >"$PID_FILE"
fi

# ---------------------------------------------------------------- readiness
# An open port only means the socket server is bound; the broker is usable once
# KafkaRaftServer logs "Kafka Server started" (it has caught up with the
# metadata log and been unfenced). A real client request then confirms it.
deadline=$(( SECONDS + TIMEOUT ))
until port_open "$PORT" && grep -q 'Kafka Server started' "$LOG_FILE" 2>/dev/null; do
  kill -0 "$pid" 2>/dev/null || fail_with_log "broker (pid $pid) exited during startup"
  (( SECONDS < deadline )) || fail_with_log "broker not ready after ${TIMEOUT}s"
  sleep 0.2
done

# On a fresh broker the first consumer group waits for __consumer_offsets to be
# created and the first idempotent producer for the broker's first producer-id
# block; meanwhile the broker answers COORDINATOR_LOAD_IN_PROGRESS, which
# kafkajs retries but logs as errors. Triggering both here keeps that latency
# and noise out of the tests. Skipped when the repo has no kafkajs installed.
NODE="$REPO_DIR/node_modules/.bin/node"
[[ -x "$NODE" ]] || NODE="$(command -v node || true)"
if [[ -n "$NODE" && -d "$REPO_DIR/node_modules/kafkajs" ]]; then
  remaining=$(( deadline - SECONDS ))
  (( remaining > 5 )) || remaining=5
  # kafkajs trips Node 24's (harmless) TimeoutNegativeWarning; the env var
  # silences it without a flag that older Node versions would reject.
  NODE_NO_WARNINGS=1 KAFKA_PROBE_BROKER="$HOST:$PORT" KAFKA_PROBE_TIMEOUT_MS="$(( remaining * 1000 ))" \
    "$NODE" --input-type=module -e '
      import { createRequire } from "node:module";
      const { Kafka, logLevel } = createRequire(process.argv[1] + "/package.json")("kafkajs");
      const kafka = new Kafka({
        clientId: "signal-engine-kafka-probe",
        brokers: [process.env.KAFKA_PROBE_BROKER],
        logLevel: logLevel.NOTHING,
      });
      const deadline = Date.now() + Number(process.env.KAFKA_PROBE_TIMEOUT_MS);
      async function retry(step) {
        for (;;) {
          try { return await step(); } catch (err) {
            if (Date.now() > deadline) { console.error(String(err)); process.exit(1); }
            await new Promise((r) => setTimeout(r, 250));
          }
        }
      }
      const admin = kafka.admin();
      await retry(async () => { await admin.connect(); await admin.listTopics(); });
      // FindCoordinator creates __consumer_offsets on first use.
      await retry(() => admin.describeGroups(["signal-engine-kafka-probe"]));
      await admin.disconnect();
      // InitProducerId makes the broker get its first producer-id block.
      const producer = kafka.producer({ idempotent: true });
      await retry(() => producer.connect());
      await producer.disconnect();
      process.exit(0);' "$REPO_DIR" \
    || fail_with_log "broker logged 'started' but kafkajs admin/producer requests failed"
fi

log "broker ready on $HOST:$PORT in $(elapsed "$t0") (pid $pid, data $DATA_DIR)"
