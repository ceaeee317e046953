#!/bin/sh
# bench/analyze.sh: `triage analyze --no-store` against `rg -c -f patterns.txt` on a generated log.
#
#   bench/analyze.sh [TRIAGE] [DATA_DIR]      (defaults: build/release/bin/triage, /tmp/triage-bench)
#   env: SIZE=1G SEED=7 PAIRS=5 SHARED=../shared/bench (genlogs.py, patterns.txt)
#
# Generates the log with ../shared/bench/genlogs.py (and its truth sidecar) when absent, runs
# triage (--threads 1) and rg alternately, PAIRS pairs after one untimed warm-up of each, and
# prints the median of the per-pair ratios triage/rg (below 1: triage is faster). Then checks
# the report with bench/recall.py: every truth incident group whose root cause is a taxonomy id
# must be reported with that cause as a root cause and evidence on one of the group's lines, and
# no reported evidence may point at a decoy line. Finally it times --threads 2 the same way.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
shared=$(cd "${SHARED:-$root/../shared/bench}" && pwd)
TRIAGE=${1:-$root/build/release/bin/triage}
DATA=${2:-/tmp/triage-bench}
SIZE=${SIZE:-1G}
SEED=${SEED:-7}
PAIRS=${PAIRS:-5}
mkdir -p "$DATA"
LOG=$DATA/gen-$SIZE-$SEED.log
TRUTH=$DATA/gen-$SIZE-$SEED.truth.jsonl
if [ ! -s "$LOG" ] || [ ! -s "$TRUTH" ]; then
  echo "generating $LOG" >&2
  python3 "$shared/genlogs.py" --size "$SIZE" --seed "$SEED" --out "$LOG" --truth "$TRUTH" --quiet
fi
[ -x "$TRIAGE" ] || { echo "bench/analyze.sh: not an executable: $TRIAGE" >&2; exit 2; }
command -v rg >/dev/null || { echo "bench/analyze.sh: rg (ripgrep) not found" >&2; exit 2; }

python3 - "$TRIAGE" "$LOG" "$TRUTH" "$shared/patterns.txt" "$PAIRS" "$DATA" "$here" <<'PY'
import os, statistics, subprocess, sys, time
triage, log, truth, patterns, pairs, data, here = sys.argv[1:8]
pairs = int(pairs)
env = dict(os.environ, NO_COLOR="1", HOME=data, XDG_CONFIG_HOME=os.path.join(data, "config"),
           XDG_STATE_HOME=os.path.join(data, "state"))
size = os.path.getsize(log)

def run(cmd, out=None):
    t = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    dt = time.monotonic() - t
    if p.returncode not in (0, 1):
        sys.exit("bench: %s exited %d: %s" % (cmd[0], p.returncode, p.stderr.decode()[-500:]))
    if out is not None:
        out.append(p.stdout)
    return dt

def pair_ratios(threads):
    tcmd = [triage, "analyze", "--no-store", "--json", "--threads", str(threads), log]
    rcmd = ["rg", "-c", "-f", patterns, log]
    outs = []
    run(tcmd, outs); run(rcmd)                     # warm-up, and the report to check
    ts, rs = [], []
    for _ in range(pairs):
        ts.append(run(tcmd)); rs.append(run(rcmd))
    ratios = [a / b for a, b in zip(ts, rs)]
    return ts, rs, ratios, outs[0]

def mbs(s): return size / 1e6 / s

ts, rs, ratios, report = pair_ratios(1)
print("file: %s (%d bytes)" % (log, size))
print("threads=1: triage median %.3fs (%.0f MB/s), rg median %.3fs (%.0f MB/s), ratio triage/rg median %.3f (min %.3f, max %.3f), %d pairs"
      % (statistics.median(ts), mbs(statistics.median(ts)), statistics.median(rs), mbs(statistics.median(rs)),
         statistics.median(ratios), min(ratios), max(ratios), pairs))

# --- correctness against the truth sidecar: bench/recall.py on the report of the warm-up run
report_path = os.path.join(data, "analyze-report.json")
with open(report_path, "wb") as f:
    f.write(report)
check = subprocess.run([sys.executable, os.path.join(here, "recall.py"), log, truth, "--json", report_path,
                        "--misses", "10"])

ts2, rs2, ratios2, _ = pair_ratios(2)
print("threads=2: triage median %.3fs (%.0f MB/s), ratio triage/rg median %.3f (min %.3f, max %.3f)"
      % (statistics.median(ts2), mbs(statistics.median(ts2)), statistics.median(ratios2), min(ratios2), max(ratios2)))
sys.exit(check.returncode)
PY
