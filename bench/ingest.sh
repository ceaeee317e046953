#!/usr/bin/env bash
# Ingest benchmark: framing + decoding + assembly on one thread (ingest_bench, no output
# formatting), next to `cat` and `rg -c -f patterns.txt` on the same files, and peak memory.
#
#   bench/ingest.sh [BUILD_DIR]     (default build/release; or set INGEST_BENCH to the binary)
#
# Data: genlogs.py --size 1G --seed 7 (text) and the same with --format jsonl, generated once into
# $TRIAGE_BENCH_DATA (default ${TMPDIR:-/tmp}/triage-bench). Every timing is taken with the file
# in the page cache (one untimed read first). Memory: ingest_bench samples its own RssAnon from
# /proc/self/status every 16 MiB of input (file pages do not count there; the input is read with
# read(2) into a 1 MiB buffer, not mapped); /usr/bin/time's max RSS is shown beside it.
#
# INGEST_CPU=N runs cat, rg and the benchmark pinned to CPU N (taskset): on a small shared VM
# one vCPU can be much slower than the other for a while, and unpinned runs then mix the two.
set -euo pipefail

ROOT=$(cd "$(dirname "$0")/.." && pwd)
SHARED=${TRIAGE_SHARED:-$ROOT/../shared}
BUILD=${1:-$ROOT/build/release}
BENCH=${INGEST_BENCH:-$BUILD/bin/ingest_bench}
DATA=${TRIAGE_BENCH_DATA:-${TMPDIR:-/tmp}/triage-bench}
PATTERNS=$SHARED/bench/patterns.txt

[ -x "$BENCH" ] || { echo "ingest.sh: $BENCH not found (build the ingest_bench target or set INGEST_BENCH)" >&2; exit 2; }
mkdir -p "$DATA"
TEXT=$DATA/genlogs-1G-seed7.log
JSONL=$DATA/genlogs-1G-seed7.jsonl
[ -s "$TEXT" ] || python3 "$SHARED/bench/genlogs.py" --size 1G --seed 7 --out "$TEXT" --quiet
[ -s "$JSONL" ] || python3 "$SHARED/bench/genlogs.py" --size 1G --seed 7 --format jsonl --out "$JSONL" --quiet

# seconds of wall-clock time of a command (output discarded), via bash's own clock
wall() {
  local t0 t1
  t0=$(date +%s.%N)
  "$@" > /dev/null
  t1=$(date +%s.%N)
  echo "$t0 $t1" | awk '{printf "%.3f", $2 - $1}'
}
mbps() { awk -v b="$1" -v s="$2" 'BEGIN { printf "%.0f", b / 1e6 / s }'; }
PIN=()
if [ -n "${INGEST_CPU:-}" ]; then PIN=(taskset -c "$INGEST_CPU"); fi

echo "machine: $(nproc) CPUs, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')"
echo "load before: $(cut -d' ' -f1-3 /proc/loadavg)${INGEST_CPU:+, pinned to CPU $INGEST_CPU}"
for f in "$TEXT" "$JSONL"; do
  bytes=$(stat -L -c %s "$f")
  cat "$f" > /dev/null  # warm the page cache
  echo
  echo "== $(basename "$f") ($bytes bytes)"
  s=$(wall "${PIN[@]}" cat "$f"); echo "cat                 ${s}s  $(mbps "$bytes" "$s") MB/s"
  if command -v rg > /dev/null; then
    t0=$(date +%s.%N); hits=$("${PIN[@]}" rg -c -f "$PATTERNS" "$f" || true); t1=$(date +%s.%N)
    s=$(echo "$t0 $t1" | awk '{printf "%.3f", $2 - $1}')
    echo "rg -c -f patterns   ${s}s  $(mbps "$bytes" "$s") MB/s  ($hits matching lines)"
  fi
  out=$("${PIN[@]}" /usr/bin/time -f "maxrss_kib %M" "$BENCH" "$f" --repeat 3 2>&1)
  echo "$out" | sed 's/^/ingest  /'
done
echo
echo "load after: $(cut -d' ' -f1-3 /proc/loadavg)"
