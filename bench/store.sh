#!/usr/bin/env bash
# The store benchmark: fills a database with 1,000,000 incidents through the Store API, reports
# stored incidents/s and evidence rows/s and the query latencies (bench/store_bench.cpp), then
# times `triage history` and `triage search` as a person runs them (process start included).
#
#   bench/store.sh [BUILD_DIR] [INCIDENTS]     (defaults: build/release, 1000000)
set -euo pipefail
build=${1:-build/release}
incidents=${2:-1000000}
bin=$build/bin
if [[ ! -x $bin/store_bench || ! -x $bin/triage ]]; then
  cmake --build "$build" --target store_bench triage
fi
work=$(mktemp -d "${TMPDIR:-/tmp}/store-bench.XXXXXX")
trap 'rm -rf "$work"' EXIT
db=$work/triage.db

"$bin/store_bench" --incidents "$incidents" --db "$db" --keep

# Median wall time of a command over N runs, in milliseconds.
median_ms() {
  local n=$1; shift
  local times=()
  for ((i = 0; i < n; i++)); do
    local t0 t1
    t0=$(date +%s%N)
    "$@" > /dev/null
    t1=$(date +%s%N)
    times+=($(( (t1 - t0) / 1000 )))
  done
  printf '%s\n' "${times[@]}" | sort -n | awk '{a[NR]=$1} END {printf "%.1f", a[int((NR+1)/2)]/1000}'
}

echo
echo "CLI, $incidents incidents (median of 15 runs, process start included):"
printf '  %-46s %s ms\n' "triage history" "$(median_ms 15 "$bin/triage" history --db "$db")"
printf '  %-46s %s ms\n' "triage history --json --service trtllm" \
  "$(median_ms 15 "$bin/triage" history --db "$db" --json --service trtllm)"
printf '  %-46s %s ms\n' "triage history --cause nccl.timeout" \
  "$(median_ms 15 "$bin/triage" history --db "$db" --cause nccl.timeout)"
printf '  %-46s %s ms\n' "triage search out of memory" \
  "$(median_ms 15 "$bin/triage" search --db "$db" out of memory)"
printf '  %-46s %s ms\n' "triage search forward_step417" \
  "$(median_ms 15 "$bin/triage" search --db "$db" forward_step417)"
printf '  %-46s %s ms\n' "triage search '\"(request 123457)'" \
  "$(median_ms 15 "$bin/triage" search --db "$db" '"(request 123457)')"
printf '  %-46s %s ms\n' "triage show 777" "$(median_ms 15 "$bin/triage" show --db "$db" 777)"
printf '  %-46s %s ms\n' "triage stats" "$(median_ms 3 "$bin/triage" stats --db "$db")"
