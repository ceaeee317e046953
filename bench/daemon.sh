#!/usr/bin/env bash
# Benchmark of `triage watch` (bench/README.md, "daemon"):
#   1. latency: fatal line written -> incident visible in the store that `triage history` reads
#      (p50/p99 over --count incidents, no verification); also for a Python traceback and for
#      CPython's segfault dump (faulthandler), which the daemon sees only once the file is quiet;
#   2. load: ~50 MB/s appended across 50 files for 60 s with logrotate-style rotation (old files
#      deleted): throughput kept (lag after the writer stops), the daemon's peak memory (VmHWM),
#      and its CPU when idle afterwards.
# Usage: bench/daemon.sh [BUILD_DIR] (default build/release); env: SECONDS_LOAD, MBPS, FILES,
# COUNT, TB_COUNT (traceback latency samples, 40), SEGV_COUNT (segfault dump samples, 40),
# STORM_SECONDS (600), WORK (scratch folder, default a new one under /tmp), PARTS (the parts to
# run, default "latency traceback segfault storm load"; `PARTS=storm` runs only the storm, ten
# minutes unless STORM_SECONDS says otherwise).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/.." && pwd)"
build="${1:-$root/build/release}"
bin="$build/bin/triage"
helper="$build/bin/daemon_bench"
[[ -x "$bin" && -x "$helper" ]] || { echo "daemon.sh: build triage and daemon_bench in $build first" >&2; exit 2; }
count="${COUNT:-200}"
seconds="${SECONDS_LOAD:-60}"
mbps="${MBPS:-50}"
files="${FILES:-50}"
parts=" ${PARTS:-latency traceback segfault storm load} "
part() { [[ "$parts" == *" $1 "* ]]; }
work="${WORK:-$(mktemp -d /tmp/triage-daemon-bench.XXXXXX)}"
mkdir -p "$work/logs" "$work/config"
export TRIAGE_RULES_DIR="$root/rules" XDG_CONFIG_HOME="$work/config"
source_log="$work/workload.log"
gzip -dc "$root/tests/data/daemon/workload.log.gz" > "$source_log"

daemon_pid=""
cleanup() { [[ -n "$daemon_pid" ]] && kill "$daemon_pid" 2>/dev/null || true; }
trap cleanup EXIT

start_daemon() {  # $1: database
  "$bin" watch --db "$1" --heartbeat 0.5 --log-level warning "$work/logs" 2>>"$work/watch.log" &
  daemon_pid=$!
  for _ in $(seq 100); do [[ -s "$1" ]] && break; sleep 0.05; done
  sleep 0.3
}
cpu_ticks() { awk '{print $14 + $15}' "/proc/$daemon_pid/stat"; }

echo "host=$(nproc) cores, $(awk '/MemTotal/ {printf "%.0f GiB", $2/1048576}' /proc/meminfo)"
echo "triage=$("$bin" --version | head -1)"

# 1. latency
if part latency; then
start_daemon "$work/latency.db"
"$helper" latency --dir "$work/logs" --db "$work/latency.db" --count "$count" --gap-ms 30
kill -TERM "$daemon_pid"; wait "$daemon_pid" || true; daemon_pid=""
rm -f "$work"/logs/*
fi
# 1b, 1c. latency of a crash with no fatal line of its own (kind, database, samples): a
# traceback, which the file must go quiet for; CPython's segfault dump, whose fatal line is inside
# a block that nothing after it closes, handed to the analyzer once the file has been quiet for
# the traceback settle time. Each sample waits for its store: fewer samples than for the fatal line.
quiet_latency() {
start_daemon "$work/$2"
"$helper" latency --kind "$1" --dir "$work/logs" --db "$work/$2" --count "$3" --gap-ms 30
kill -TERM "$daemon_pid"; wait "$daemon_pid" || true; daemon_pid=""
rm -f "$work"/logs/*
}
if part traceback; then quiet_latency traceback latency-tb.db "${TB_COUNT:-40}"; fi
if part segfault; then quiet_latency segfault latency-segv.db "${SEGV_COUNT:-40}"; fi

# 1d. a service failing continuously (STORM_SECONDS, default 600, at 100 failures a second):
# the daemon's RSS must stay flat.
if part storm; then
start_daemon "$work/storm.db"
"$helper" storm --dir "$work/logs" --seconds "${STORM_SECONDS:-600}" --rate 100 \
  --pid "$daemon_pid" || echo "storm_rss_ok=no"
echo "storm_daemon_peak_rss_mib=$(awk '/VmHWM/ {printf "%.1f", $2/1024}' "/proc/$daemon_pid/status")"
kill -TERM "$daemon_pid"; wait "$daemon_pid" || true; daemon_pid=""
"$bin" history --db "$work/storm.db" --limit 5 | sed 's/^/storm history: /'
rm -f "$work"/logs/*
fi

# 2. load, then idle
part load || { [[ -z "${WORK:-}" ]] && rm -rf "$work"; exit 0; }
start_daemon "$work/load.db"
"$helper" load --dir "$work/logs" --db "$work/load.db" --source "$source_log" \
  --seconds "$seconds" --mbps "$mbps" --files "$files" --rotate-mb 16 || echo "load_kept_up=no"
echo "daemon_peak_rss_mib=$(awk '/VmHWM/ {printf "%.1f", $2/1024}' "/proc/$daemon_pid/status")"
echo "daemon_rss_after_mib=$(awk '/VmRSS/ {printf "%.1f", $2/1024}' "/proc/$daemon_pid/status")"
hz=$(getconf CLK_TCK)
t0=$(cpu_ticks); sleep 10; t1=$(cpu_ticks)
echo "idle_cpu_percent=$(awk -v a="$t0" -v b="$t1" -v hz="$hz" 'BEGIN {printf "%.2f", (b-a)/hz/10*100}')"
"$bin" status --db "$work/load.db" | sed 's/^/status: /'
kill -TERM "$daemon_pid"; wait "$daemon_pid"; echo "daemon_exit=$?"; daemon_pid=""
echo "log_lines=$(wc -l < "$work/watch.log") (warnings and errors: $work/watch.log)"
[[ -z "${WORK:-}" ]] && rm -rf "$work"
