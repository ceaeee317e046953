#!/bin/sh
# bench/pipe.sh: `cat LOG | triage analyze` against `triage analyze LOG` (default threads).
#
#   bench/pipe.sh [TRIAGE] [DATA_DIR]      (defaults: build/release/bin/triage, /tmp/triage-bench)
#   env: SIZE=256M SEED=7 PAIRS=5 THREADS= (empty: triage's default)
#        SHARED=../shared/bench (genlogs.py, patterns.txt)
#
# Generates the log with genlogs.py when absent (as bench/analyze.sh does), then times
# `triage analyze --no-store --json LOG` and `cat LOG | triage analyze --no-store --json`
# alternately (wall clock, the pipe's including cat's), PAIRS pairs after one untimed warm-up of
# each, and prints the median of the per-pair ratios pipe/file; the target is 1.15 or less. The
# peers in the same pairs: `cat LOG >/dev/null` (what the pipe's writer costs alone) and
# `rg -c -f patterns.txt` of the file and of `cat LOG |` (what a pipe costs a reader that maps a
# file). It checks that the two reports are the same but for the source's name (and the
# service, id and fingerprint made of it) and exits 1 when they are not.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
shared=$(cd "${SHARED:-$root/../shared/bench}" && pwd)
TRIAGE=${1:-$root/build/release/bin/triage}
DATA=${2:-/tmp/triage-bench}
SIZE=${SIZE:-256M}
SEED=${SEED:-7}
PAIRS=${PAIRS:-5}
THREADS=${THREADS:-}
mkdir -p "$DATA"
LOG=$DATA/gen-$SIZE-$SEED.log
TRUTH=$DATA/gen-$SIZE-$SEED.truth.jsonl
if [ ! -s "$LOG" ] || [ ! -s "$TRUTH" ]; then
  echo "generating $LOG" >&2
  python3 "$shared/genlogs.py" --size "$SIZE" --seed "$SEED" --out "$LOG" --truth "$TRUTH" --quiet
fi
[ -x "$TRIAGE" ] || { echo "bench/pipe.sh: not an executable: $TRIAGE" >&2; exit 2; }
command -v rg >/dev/null || { echo "bench/pipe.sh: rg (ripgrep) not found" >&2; exit 2; }

python3 - "$TRIAGE" "$LOG" "$PAIRS" "$DATA" "$THREADS" "$shared/patterns.txt" <<'PY'
import json, os, statistics, subprocess, sys, time
triage, log, pairs, data, threads, patterns = sys.argv[1:7]
pairs = int(pairs)
env = dict(os.environ, NO_COLOR="1", HOME=data, XDG_CONFIG_HOME=os.path.join(data, "config"),
           XDG_STATE_HOME=os.path.join(data, "state"))
args = [triage, "analyze", "--no-store", "--json"] + (["--threads", threads] if threads else [])
size = os.path.getsize(log)

def run(cmd, shell=False, ok=(0,)):
    t = time.monotonic()
    p = subprocess.run(cmd, shell=shell, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    dt = time.monotonic() - t
    if p.returncode not in ok:  # rg exits 1 where nothing matches
        sys.exit("bench: %s exited %d: %s" % (cmd, p.returncode, p.stderr.decode()[-500:]))
    return dt, p.stdout

quote = lambda s: "'" + s.replace("'", "'\\''") + "'"
fcmd = args + [log]
pcmd = "cat %s | %s" % (quote(log), " ".join(quote(a) for a in args))
_, file_report = run(fcmd)
_, pipe_report = run(pcmd, shell=True)
ccmd = "cat %s >/dev/null" % quote(log)
rfcmd = ["rg", "-c", "-f", patterns, log]
rpcmd = "cat %s | rg -c -f %s" % (quote(log), quote(patterns))
run(rfcmd, ok=(0, 1))
run(rpcmd, shell=True, ok=(0, 1))
fs, ps, cs, rfs, rps = [], [], [], [], []
for _ in range(pairs):
    fs.append(run(fcmd)[0])
    ps.append(run(pcmd, shell=True)[0])
    cs.append(run(ccmd, shell=True)[0])
    rfs.append(run(rfcmd, ok=(0, 1))[0])
    rps.append(run(rpcmd, shell=True, ok=(0, 1))[0])
ratios = [p / f for p, f in zip(ps, fs)]
rg_ratios = [p / f for p, f in zip(rps, rfs)]
mbs = lambda s: size / 1e6 / s
def line(name, ts):
    m = statistics.median(ts)
    print("%s: median %.3fs (%.0f MB/s) (%s)" % (name, m, mbs(m), " ".join("%.3f" % t for t in ts)))
print("file: %s (%d bytes), threads: %s" % (log, size, threads or "default"))
line("analyze FILE", fs)
line("cat FILE | analyze", ps)
line("cat FILE >/dev/null", cs)
line("rg -c -f patterns.txt FILE", rfs)
line("cat FILE | rg -c -f patterns.txt", rps)
print("ratio pipe/file: median %.3f (min %.3f, max %.3f), %d pairs; target <= 1.15"
      % (statistics.median(ratios), min(ratios), max(ratios), pairs))
print("rg's ratio pipe/file: median %.3f (min %.3f, max %.3f)"
      % (statistics.median(rg_ratios), min(rg_ratios), max(rg_ratios)))

# The same report but for what the source's name makes: its name, the service, id, fingerprint.
def strip(x):
    if isinstance(x, dict):
        return {k: strip(v) for k, v in x.items() if k not in ("service", "source", "id", "fingerprint")}
    if isinstance(x, list):
        return [strip(v) for v in x]
    return x
a = strip(json.loads(file_report)["incidents"])
b = strip(json.loads(pipe_report)["incidents"])
same = a == b
print("reports: %d and %d incidents, %s" % (len(a), len(b), "the same" if same else "DIFFERENT"))
sys.exit(0 if same else 1)
PY
