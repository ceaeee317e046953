#!/bin/sh
# The golden reports in this folder: the text (NO_COLOR) and --json reports of
# `triage analyze --no-store` for each case in cases.list (a log, or the logs of one job given
# together), with the host name masked.
#
#   tests/golden/regen.sh [PATH/TO/triage]           rewrite them after an intended change
#                                                    (then review: git diff tests/golden)
#   tests/golden/regen.sh --check [PATH/TO/triage]   compare the current output to them; exit 1
#                                                    and print the differences when they differ
# The default binary is build/release/bin/triage.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
check=0
if [ "${1:-}" = "--check" ]; then check=1; shift; fi
bin=${1:-$root/build/release/bin/triage}
case "$bin" in /*) ;; *) bin=$(pwd)/$bin ;; esac
[ -x "$bin" ] || { echo "regen.sh: not an executable: $bin" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
out=$here
if [ $check = 1 ]; then out=$tmp/out; mkdir -p "$out"; fi

# The host name is the machine's: masked so that the files compare on any machine (also in a
# job's name that holds it, docs/json-report.md "job").
mask() {
  sed -E -e 's/"host":( ?)"[^"]*"/"host":\1"<host>"/g' -e 's/"job":( ?)"host [^:"]*:/"job":\1"host <host>:/g' -e 's/^(Incident[^:]*: .*) on [^ ]+$/\1 on <host>/' \
      -e 's/^(  (#[0-9]+|[0-9]+\.) [^ ]+) on [^ ,]+, /\1 on <host>, /'
}
run() {
  # SOURCE_DATE_EPOCH (2027-01-01): the year of a year-less log time, whenever the logs were
  # checked out.
  (cd "$root" && env -u TRIAGE_DB SOURCE_DATE_EPOCH=1798761600 HOME="$tmp/home" XDG_CONFIG_HOME="$tmp/home/config" \
     XDG_STATE_HOME="$tmp/home/state" XDG_DATA_HOME="$tmp/home/data" NO_COLOR=1 \
     TRIAGE_RULES_DIR="$root/rules" "$bin" analyze "$@" </dev/null)
}

status=0
for name in $(grep -v '^[[:space:]]*#' "$here/cases.list" | awk 'NF >= 2 { print $1 }'); do
  # One log, or the logs of one job given together (no spaces in their paths).
  logs=$(awk -v n="$name" '$1 == n { $1 = ""; print }' "$here/cases.list")
  # shellcheck disable=SC2086
  run --no-store $logs | mask >"$out/$name.txt"
  # shellcheck disable=SC2086
  run --json --no-store $logs | mask >"$out/$name.json"
  if [ $check = 1 ]; then
    for ext in txt json; do
      if ! diff -u "$here/$name.$ext" "$out/$name.$ext"; then status=1; fi
    done
  else
    echo "regen.sh: $name"
  fi
done
exit $status
