#!/usr/bin/env bash
# Local telemetry stack for topology experiments, without Docker: the system's Prometheus (and Grafana when it
# is installed) scraping AlpaSim runs through file-based service discovery.
#
#   start-prometheus-grafana.sh [start] <file-sd-dir | [user@]host:/path> [--prometheus-port 9093] [--grafana-port 3003]
#                               [--time-scale S] [--scrape-interval 5s] [--state-dir DIR]
#   start-prometheus-grafana.sh stop [--state-dir DIR]
#   start-prometheus-grafana.sh status [--state-dir DIR]
#
# A remote host:/path is mounted read-only with sshfs, or mirrored every few seconds with rsync when sshfs is
# missing. Everything lives in one state folder (default <repo>/.state/telemetry); `stop` ends only the
# processes recorded there, and only if they still are the ones this script started.
set -euo pipefail

SCRIPT_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO_ROOT="$(cd "$SCRIPT_DIR/.." && pwd)"
STATE_DIR="${TOPO_TELEMETRY_STATE:-$REPO_ROOT/.state/telemetry}"

usage() { sed -n '5,13p' "${BASH_SOURCE[0]}" | sed 's/^# \{0,1\}//'; }
die() { echo "start-prometheus-grafana: $*" >&2; exit 1; }

ACTION=start
case "${1:-}" in
  start|up) ACTION=start; shift ;;
  stop|down) ACTION=stop; shift ;;
  status) ACTION=status; shift ;;
  -h|--help) usage; exit 0 ;;
esac

SOURCE=""
PROM_PORT=9093
GRAFANA_PORT=3003
TIME_SCALE=1
SCRAPE_INTERVAL=5s
while [[ $# -gt 0 ]]; do
  case "$1" in
    --prometheus-port) PROM_PORT="${2:?--prometheus-port needs a value}"; shift 2 ;;
    --grafana-port) GRAFANA_PORT="${2:?--grafana-port needs a value}"; shift 2 ;;
    --time-scale) TIME_SCALE="${2:?--time-scale needs a value}"; shift 2 ;;
    --scrape-interval) SCRAPE_INTERVAL="${2:?--scrape-interval needs a value}"; shift 2 ;;
    --state-dir) STATE_DIR="${2:?--state-dir needs a value}"; shift 2 ;;
    -h|--help) usage; exit 0 ;;
    -*) die "unknown option $1 (see --help)" ;;
    *) [[ -z "$SOURCE" ]] || die "unexpected extra argument $1"; SOURCE="$1"; shift ;;
  esac
done
[[ "$PROM_PORT" =~ ^[0-9]{2,5}$ ]] || die "--prometheus-port $PROM_PORT: expected a port number"
[[ "$GRAFANA_PORT" =~ ^[0-9]{2,5}$ ]] || die "--grafana-port $GRAFANA_PORT: expected a port number"
[[ "$TIME_SCALE" =~ ^[0-9]+$ && "$TIME_SCALE" -ge 1 ]] || die "--time-scale $TIME_SCALE: expected a positive integer"
[[ "$SCRAPE_INTERVAL" =~ ^[0-9]+(ms|s|m)$ ]] || die "--scrape-interval $SCRAPE_INTERVAL: expected a duration like 5s"

PID_DIR="$STATE_DIR/pids"
LOG_DIR="$STATE_DIR/logs"

# A pid file holds "<pid> <marker>"; the process is ours only if its command line still contains the marker.
is_ours() {
  local file="$1" pid marker
  [[ -f "$file" ]] || return 1
  read -r pid marker <"$file" || return 1
  [[ -n "$pid" && -r "/proc/$pid/cmdline" ]] || return 1
  tr '\0' ' ' <"/proc/$pid/cmdline" | grep -qF -- "$marker"
}

stop_one() {
  local name="$1" file="$PID_DIR/$1.pid" pid
  if is_ours "$file"; then
    read -r pid _ <"$file"
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -0 "$pid" 2>/dev/null && kill -9 "$pid" 2>/dev/null || true
    echo "stopped $name (pid $pid)"
  fi
  rm -f "$file"
}

unmount_sshfs() {
  local dir="$STATE_DIR/file-sd-remote"
  if command -v mountpoint >/dev/null 2>&1 && mountpoint -q "$dir" 2>/dev/null; then
    fusermount3 -u "$dir" 2>/dev/null || fusermount -u "$dir" 2>/dev/null || umount "$dir" || true
    echo "unmounted $dir"
  fi
}

if [[ "$ACTION" == stop ]]; then
  stop_one grafana
  stop_one mirror
  stop_one prometheus
  unmount_sshfs
  exit 0
fi

if [[ "$ACTION" == status ]]; then
  for name in prometheus grafana mirror; do
    if is_ours "$PID_DIR/$name.pid"; then read -r pid _ <"$PID_DIR/$name.pid"; echo "$name running (pid $pid)"; else echo "$name stopped"; fi
  done
  [[ -f "$STATE_DIR/urls" ]] && cat "$STATE_DIR/urls"
  exit 0
fi

[[ -n "$SOURCE" ]] || { usage >&2; die "missing the file-SD directory (or host:/path)"; }
command -v prometheus >/dev/null 2>&1 || die "prometheus is not installed (Debian: apt-get install prometheus)"
if is_ours "$PID_DIR/prometheus.pid"; then die "already running from $STATE_DIR: run \`$0 stop --state-dir $STATE_DIR\` first"; fi
port_free() { ! (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
port_free "$PROM_PORT" || die "port $PROM_PORT is in use: pick another --prometheus-port"

mkdir -p "$PID_DIR" "$LOG_DIR" "$STATE_DIR/prometheus/rules" "$STATE_DIR/prometheus/data"

# File-SD source: local folder, sshfs mount, or rsync mirror loop.
if [[ "$SOURCE" == *:* && "$SOURCE" != /* ]]; then
  HOST="${SOURCE%%:*}"
  REMOTE_PATH="${SOURCE#*:}"
  [[ "$HOST" =~ ^([A-Za-z0-9._-]+@)?[A-Za-z0-9._-]+$ ]] || die "$SOURCE: bad host in host:/path"
  [[ "$REMOTE_PATH" =~ ^/[A-Za-z0-9._/-]*$ ]] || die "$SOURCE: the remote path must be absolute and plain"
  FILE_SD_DIR="$STATE_DIR/file-sd-remote"
  mkdir -p "$FILE_SD_DIR"
  if command -v sshfs >/dev/null 2>&1; then
    unmount_sshfs
    sshfs "$SOURCE" "$FILE_SD_DIR" -o ro,reconnect,ServerAliveInterval=15,ServerAliveCountMax=3 \
      || die "sshfs $SOURCE failed (check \`ssh $HOST\` works without a password)"
    echo "mounted $SOURCE on $FILE_SD_DIR (sshfs)"
  else
    command -v rsync >/dev/null 2>&1 || die "neither sshfs nor rsync is installed: cannot follow $SOURCE"
    MARKER="topo-telemetry-mirror:$STATE_DIR"
    # The loop deletes local copies of removed targets, so ended runs disappear from Prometheus too.
    nohup bash -c 'while :; do rsync -a --delete --include="*.json" --exclude="*" "$1/" "$2/" || true; sleep 3; done' \
      "$MARKER" "$SOURCE" "$FILE_SD_DIR" >"$LOG_DIR/mirror.log" 2>&1 &
    echo "$! $MARKER" >"$PID_DIR/mirror.pid"
    echo "mirroring $SOURCE to $FILE_SD_DIR every 3 s (rsync; sshfs is not installed)"
  fi
else
  FILE_SD_DIR="$(mkdir -p "$SOURCE" && cd "$SOURCE" && pwd)"
fi

RULES_SRC="$REPO_ROOT/telemetry/prometheus/alpasim.rules.yml"
[[ "$TIME_SCALE" == 1 ]] || RULES_SRC="$REPO_ROOT/telemetry/prometheus/alpasim.rules.timescale-$TIME_SCALE.yml"
[[ -f "$RULES_SRC" ]] || die "no rule file $RULES_SRC (generate it: node scripts/gen-rules.mjs --scale $TIME_SCALE > $RULES_SRC)"
cp "$RULES_SRC" "$STATE_DIR/prometheus/rules/alpasim.rules.yml"
cat >"$STATE_DIR/prometheus/prometheus.yml" <<YAML
# Written by scripts/start-prometheus-grafana.sh
global:
  scrape_interval: $SCRAPE_INTERVAL
  evaluation_interval: $SCRAPE_INTERVAL
rule_files:
  - $STATE_DIR/prometheus/rules/*.yml
scrape_configs:
  - job_name: alpasim
    file_sd_configs:
      - files:
          - $FILE_SD_DIR/*.json
        refresh_interval: 5s
YAML
promtool check config "$STATE_DIR/prometheus/prometheus.yml" >/dev/null 2>&1 || true

nohup prometheus \
  --config.file="$STATE_DIR/prometheus/prometheus.yml" \
  --storage.tsdb.path="$STATE_DIR/prometheus/data" \
  --storage.tsdb.retention.time=30d \
  --web.listen-address="127.0.0.1:$PROM_PORT" \
  --web.enable-lifecycle \
  >"$LOG_DIR/prometheus.log" 2>&1 &
PROM_PID=$!
echo "$PROM_PID $STATE_DIR/prometheus/prometheus.yml" >"$PID_DIR/prometheus.pid"
ready=""
for _ in $(seq 1 150); do
  if curl -fsS "http://127.0.0.1:$PROM_PORT/-/ready" >/dev/null 2>&1; then ready=1; break; fi
  kill -0 "$PROM_PID" 2>/dev/null || { tail -n 20 "$LOG_DIR/prometheus.log" >&2; rm -f "$PID_DIR/prometheus.pid"; die "prometheus exited; log: $LOG_DIR/prometheus.log"; }
  sleep 0.2
done
[[ -n "$ready" ]] || die "prometheus did not become ready on port $PROM_PORT within 30 s; log: $LOG_DIR/prometheus.log"

echo "prometheus: http://127.0.0.1:$PROM_PORT (file-SD $FILE_SD_DIR, rules $(basename "$RULES_SRC"))"
echo "prometheus http://127.0.0.1:$PROM_PORT" >"$STATE_DIR/urls"

GRAFANA_BIN=""
for candidate in grafana-server grafana; do command -v "$candidate" >/dev/null 2>&1 && { GRAFANA_BIN="$(command -v "$candidate")"; break; }; done
if [[ -z "$GRAFANA_BIN" ]]; then
  echo "grafana: not installed; skipped (dashboard files: $REPO_ROOT/telemetry/grafana)"
  exit 0
fi
port_free "$GRAFANA_PORT" || die "port $GRAFANA_PORT is in use: pick another --grafana-port"
GRAFANA_HOME="${GRAFANA_HOME:-/usr/share/grafana}"
mkdir -p "$STATE_DIR/grafana/data" "$STATE_DIR/grafana/logs" "$STATE_DIR/grafana/plugins"
cat >"$STATE_DIR/grafana/grafana.ini" <<INI
[server]
http_addr = 127.0.0.1
http_port = $GRAFANA_PORT
[paths]
data = $STATE_DIR/grafana/data
logs = $STATE_DIR/grafana/logs
plugins = $STATE_DIR/grafana/plugins
provisioning = $REPO_ROOT/telemetry/grafana/provisioning
[auth.anonymous]
enabled = true
org_role = Viewer
[analytics]
reporting_enabled = false
check_for_updates = false
INI
GRAFANA_ARGS=(--homepath "$GRAFANA_HOME" --config "$STATE_DIR/grafana/grafana.ini")
[[ "$(basename "$GRAFANA_BIN")" == grafana ]] && GRAFANA_ARGS=(server "${GRAFANA_ARGS[@]}")
TOPO_PROMETHEUS_URL="http://127.0.0.1:$PROM_PORT" TOPO_GRAFANA_DASHBOARDS="$REPO_ROOT/telemetry/grafana/dashboards" \
  nohup "$GRAFANA_BIN" "${GRAFANA_ARGS[@]}" >"$LOG_DIR/grafana.log" 2>&1 &
echo "$! $STATE_DIR/grafana/grafana.ini" >"$PID_DIR/grafana.pid"
echo "grafana: http://127.0.0.1:$GRAFANA_PORT/d/alpasim-runtime"
echo "grafana http://127.0.0.1:$GRAFANA_PORT/d/alpasim-runtime" >>"$STATE_DIR/urls"
