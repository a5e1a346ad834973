#!/usr/bin/env bash
# Stop the broker started by infra/kafka/start.sh.
#
#   infra/kafka/stop.sh          stop, keep topics and offsets
#   infra/kafka/stop.sh --wipe   stop and delete the data dir (or KAFKA_WIPE=1)
#
# Uses the same KAFKA_DATA_DIR as start.sh. Exits 0 when nothing is running.
set -euo pipefail

REPO_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
DATA_DIR="${KAFKA_DATA_DIR:-$REPO_DIR/.data/kafka}"
PID_FILE="$DATA_DIR/kafka.pid"
WIPE="${KAFKA_WIPE:-0}"
GRACE="${KAFKA_STOP_TIMEOUT:-30}"

for arg in "$@"; do
  case "$arg" in
    --wipe) WIPE=1 ;;
    -h|--help) sed -n '2,7s/^# \{0,1\}//p' "$0"; exit 0 ;;
    *) echo "kafka: unknown argument: $arg" >&2; exit 2 ;;
  esac
done

log() { echo "kafka: $*"; }

# A zombie still answers kill -0; treat it as gone, or the waits below would
# spin until the timeout when nothing reaps the broker.
alive() {
  kill -0 "$1" 2>/dev/null || return 1
  if [[ -r "/proc/$1/stat" ]]; then
    [[ "$(cut -d' ' -f3 "/proc/$1/stat" 2>/dev/null)" != Z ]]
  fi
}

pid=""
if [[ -f "$PID_FILE" ]]; then
  pid="$(cat "$PID_FILE")"
  # Never signal a recycled pid that now belongs to something else.
  if ! [[ "$pid" =~ ^[0-9]+$ ]] || ! alive "$pid"; then
    pid=""
  elif [[ -r "/proc/$pid/cmdline" ]] && ! tr '\0' ' ' <"/proc/$pid/cmdline" | grep -q 'kafka\.Kafka'; then
    pid=""
  fi
fi

if [[ -n "$pid" ]]; then
  # SIGTERM runs Kafka's shutdown hook: controlled shutdown and a clean log
  # flush, so the next start skips log recovery.
  kill -TERM "$pid" 2>/dev/null || true
  deadline=$(( SECONDS + GRACE ))
  while alive "$pid" && (( SECONDS < deadline )); do
    sleep 0.2
  done
  if alive "$pid"; then
    log "pid $pid still alive after ${GRACE}s; sending SIGKILL"
    kill -KILL "$pid" 2>/dev/null || true
    deadline=$(( SECONDS + 10 ))
    while alive "$pid" && (( SECONDS < deadline )); do sleep 0.1; done
  fi
  log "stopped (pid $pid)"
else
  log "not running"
fi
rm -f "$PID_FILE"

if [[ "$WIPE" == 1 && -d "$DATA_DIR" ]]; then
  # KAFKA_DATA_DIR may point anywhere; only delete a directory that start.sh
  # evidently made, never e.g. a mistyped $HOME.
  if [[ -f "$DATA_DIR/server.properties" || -d "$DATA_DIR/kraft" ]] \
     && ! find "$DATA_DIR" -mindepth 1 -maxdepth 1 \
          ! -name kraft ! -name 'kafka.log*' ! -name kafka.pid \
          ! -name server.properties ! -name log4j2.properties ! -name format.log \
          -print -quit | grep -q .; then
    rm -rf "$DATA_DIR"
    log "wiped $DATA_DIR"
  else
    echo "kafka: refusing to wipe $DATA_DIR: it holds files start.sh did not create" >&2
    exit 1
  fi
fi
