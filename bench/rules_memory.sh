#!/bin/sh
# bench/rules_memory.sh: the peak memory of `triage rules check` on a generated rule pack, for
# this build and a peer in the same run.
#
#   bench/rules_memory.sh [TRIAGE] [PEER] [DATA_DIR]
#       (defaults: build/release/bin/triage, none, /tmp/triage-rules-bench)
#   env: MIB=15.9 (the pack's size; the limit is 16 MiB), SHAPE=heavy|plain
#
# The pack is one TOML file of signatures, each with a cause: `plain` patterns are a literal and
# two captures, `heavy` ones end in `(?P<detail>.{0,200})`, a bounded repetition RE2 compiles into
# some 100 KiB (the shape of the shipped packs' catch-all patterns). Peak RSS is GNU time's
# "Maximum resident set size" (/usr/bin/time -v); the unit's MemoryMax is 1 GiB.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
TRIAGE=${1:-$root/build/release/bin/triage}
PEER=${2:-}
DATA=${3:-/tmp/triage-rules-bench}
MIB=${MIB:-15.9}
SHAPE=${SHAPE:-heavy}
[ -x "$TRIAGE" ] || { echo "bench/rules_memory.sh: not an executable: $TRIAGE" >&2; exit 2; }
[ -x /usr/bin/time ] || { echo "bench/rules_memory.sh: /usr/bin/time (GNU time) not found" >&2; exit 2; }
PACK=$DATA/pack-$SHAPE-$MIB
mkdir -p "$PACK"
python3 - "$PACK/generated.toml" "$MIB" "$SHAPE" <<'PY'
import sys
out, mib, shape = sys.argv[1], float(sys.argv[2]), sys.argv[3]
limit = int(mib * 1024 * 1024)
tail = ": (?P<detail>.{0,200})" if shape == "heavy" else ""
size, n, parts = 0, 0, []
while True:
    rule = (f'[[signature]]\nid = "gen.s{n}"\n'
            f"pattern = '''generated failure {n} in (?P<module>[a-z_]+) at step (?P<step>\\d+){tail}'''\n"
            f'literal = "generated failure {n} in"\nstrength = 0.5\n\n'
            f'[[cause]]\nid = "gen.c{n}"\ntitle = "generated cause in {{module}}"\n'
            f'remedy = "fix {{module}}"\nrequires = {{ any = ["gen.s{n}"] }}\nprior = 0.5\n\n')
    if size + len(rule) > limit:
        break
    parts.append(rule)
    size += len(rule)
    n += 1
open(out, "w").write("".join(parts))
print(f"{out}: {n} signatures, {size} bytes", file=sys.stderr)
PY

measure() {
  /usr/bin/time -v "$1" rules check "$PACK" >"$DATA/check.out" 2>"$DATA/time.err" || true
  rss=$(sed -n 's/.*Maximum resident set size (kbytes): //p' "$DATA/time.err")
  wall=$(sed -n 's/.*Elapsed (wall clock) time (h:mm:ss or m:ss): //p' "$DATA/time.err")
  echo "$2: peak RSS ${rss} KiB, wall ${wall}: $(tail -1 "$DATA/check.out")"
}
measure "$TRIAGE" "this build"
[ -n "$PEER" ] && measure "$PEER" "peer"
exit 0
