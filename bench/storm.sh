#!/bin/sh
# bench/storm.sh: `triage analyze --threads 1` of a failure storm against `rg -c -f patterns.txt`.
#
#   bench/storm.sh [TRIAGE] [DATA_DIR]      (defaults: build/release/bin/triage, /tmp/triage-bench)
#   env: FAILURES=600000 RATE=100 PAIRS=3 SHARED=../shared/bench (patterns.txt)
#
# Writes the log of a crash-looping 8-rank job with bench/storm_log.py when absent (FAILURES CUDA
# out-of-memory tracebacks of three lines, `[rankN]:` prefixes, RATE failures a second; 160 MB
# for 600,000), then runs triage (`analyze --no-store --json --threads 1`) and rg alternately,
# PAIRS pairs after one untimed warm-up of each, and prints both wall times and the median of
# the per-pair ratios triage/rg. The target is a ratio of 4 or less. It checks that the report
# is one incident of the job, out of memory, spanning every line.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
shared=$(cd "${SHARED:-$root/../shared/bench}" && pwd)
TRIAGE=${1:-$root/build/release/bin/triage}
DATA=${2:-/tmp/triage-bench}
FAILURES=${FAILURES:-600000}
RATE=${RATE:-100}
PAIRS=${PAIRS:-3}
mkdir -p "$DATA"
LOG=$DATA/storm-$FAILURES-$RATE.log
if [ ! -s "$LOG" ]; then
  echo "generating $LOG" >&2
  python3 "$here/storm_log.py" --failures "$FAILURES" --rate "$RATE" --out "$LOG.part"
  mv "$LOG.part" "$LOG"
fi
[ -x "$TRIAGE" ] || { echo "bench/storm.sh: not an executable: $TRIAGE" >&2; exit 2; }
command -v rg >/dev/null || { echo "bench/storm.sh: rg (ripgrep) not found" >&2; exit 2; }

python3 - "$TRIAGE" "$LOG" "$shared/patterns.txt" "$PAIRS" "$DATA" "$FAILURES" <<'PY'
import json, os, statistics, subprocess, sys, time
triage, log, patterns, pairs, data, failures = sys.argv[1:7]
pairs, failures = int(pairs), int(failures)
env = dict(os.environ, NO_COLOR="1", HOME=data, XDG_CONFIG_HOME=os.path.join(data, "config"),
           XDG_STATE_HOME=os.path.join(data, "state"))

def run(cmd):
    t = time.monotonic()
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    dt = time.monotonic() - t
    if p.returncode not in (0, 1):
        sys.exit("bench: %s exited %d: %s" % (cmd[0], p.returncode, p.stderr.decode()[-500:]))
    return dt, p.stdout

tcmd = [triage, "analyze", "--no-store", "--json", "--threads", "1", log]
rcmd = ["rg", "-c", "-f", patterns, log]
_, report = run(tcmd)
run(rcmd)
ts, rs = [], []
for _ in range(pairs):
    ts.append(run(tcmd)[0])
    rs.append(run(rcmd)[0])
ratios = [a / b for a, b in zip(ts, rs)]
print("file: %s (%d bytes, %d failures)" % (log, os.path.getsize(log), failures))
print("triage --threads 1: median %.3fs (%s)" % (statistics.median(ts), " ".join("%.3f" % t for t in ts)))
print("rg -c -f patterns.txt: median %.3fs (%s)" % (statistics.median(rs), " ".join("%.3f" % t for t in rs)))
print("ratio triage/rg: median %.2f (min %.2f, max %.2f), %d pairs; target <= 4"
      % (statistics.median(ratios), min(ratios), max(ratios), pairs))
incidents = json.loads(report)["incidents"]
first = incidents[0] if incidents else {}
cause = first["causes"][0]["cause"] if first.get("causes") else "-"
ok = len(incidents) == 1 and cause == "cuda.oom" and first["last_line"] == 3 * failures
print("report: %d incident(s), lines %s-%s, first cause %s, %d actors: %s" % (
    len(incidents), first.get("first_line"), first.get("last_line"), cause,
    len(first.get("actors", [])), "ok" if ok else "UNEXPECTED"))
sys.exit(0 if ok else 1)
PY
