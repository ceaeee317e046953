#!/bin/sh
# bench/analyze.sh: `triage analyze --no-store` against `rg -c -f patterns.txt` on a generated log.
#
#   bench/analyze.sh [TRIAGE] [DATA_DIR]      (defaults: build/release/bin/triage, /tmp/triage-bench)
#   env: SIZE=1G SEED=7 PAIRS=5 SHARED=../shared/bench (genlogs.py, patterns.txt)
#
# Generates the log with ../shared/bench/genlogs.py (and its truth sidecar) when absent, runs
# triage (--threads 1) and rg alternately, PAIRS pairs after one untimed warm-up of each, and
# prints the median of the per-pair ratios triage/rg (below 1: triage is faster). Then checks
# the report: every truth incident group whose root cause is a taxonomy id must be reported with
# that cause as a root cause and evidence inside the group's lines, and no reported evidence may
# point at a decoy line. Finally it times --threads 2 the same way.
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

python3 - "$TRIAGE" "$LOG" "$TRUTH" "$shared/patterns.txt" "$PAIRS" "$DATA" <<'PY'
import json, os, statistics, subprocess, sys, time
triage, log, truth, patterns, pairs, data = sys.argv[1:7]
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

# --- correctness against the truth sidecar
TAXONOMY = ["cuda.toolkit_too_old_for_arch", "cuda.no_kernel_image", "cuda.driver_too_old", "lib.arch_unsupported",
            "cuda.oom", "host.oom_killed", "python.symbol_missing", "python.module_missing", "native.undefined_symbol",
            "native.lib_not_found", "jit.build_failed", "cuda.illegal_memory_access", "nccl.failure",
            "gpu.hardware_fault", "net.port_in_use"]
def base(c):
    for t in TAXONOMY + ["unclassified"]:
        if c == t or c.startswith(t + "."):
            return t
    return c
groups, decoys = {}, set()
for line in open(truth, encoding="utf-8"):
    r = json.loads(line)
    if r.get("type") == "incident":
        g = groups.setdefault(r["group"], {"root": r["root_cause"], "lines": set()})
        g["lines"].update(r["lines"])
    elif r.get("type") == "hard_case" and r.get("kind") == "decoy_prompt":
        decoys.add(r["line"])
doc = json.loads(report)
found = {}   # cause -> set of evidence lines of root causes
decoy_hits = []
for inc in doc["incidents"]:
    for c in inc["causes"]:
        lines = {e["line"] for e in c["evidence"]}
        found.setdefault(base(c["cause"]), set()).update(lines)
        for s in c.get("symptoms", []):
            for e in s["evidence"]:
                if e["line"] in decoys: decoy_hits.append((c["cause"], e["line"]))
        for l in lines:
            if l in decoys: decoy_hits.append((c["cause"], l))
want = [g for g in groups.values() if g["root"] in TAXONOMY]
missed = [g for g in want if not (found.get(g["root"], set()) & g["lines"])]
print("truth: %d incident groups with a taxonomy root cause, %d found, %d missed; %d decoy lines, %d reported as evidence; %d incidents reported"
      % (len(want), len(want) - len(missed), len(missed), len(decoys), len(decoy_hits), len(doc["incidents"])))
for g in missed[:10]:
    print("  missed %s at lines %d-%d" % (g["root"], min(g["lines"]), max(g["lines"])))
for c, l in decoy_hits[:10]:
    print("  decoy line %d reported as evidence of %s" % (l, c))

ts2, rs2, ratios2, _ = pair_ratios(2)
print("threads=2: triage median %.3fs (%.0f MB/s), ratio triage/rg median %.3f (min %.3f, max %.3f)"
      % (statistics.median(ts2), mbs(statistics.median(ts2)), statistics.median(ratios2), min(ratios2), max(ratios2)))
sys.exit(1 if missed or decoy_hits else 0)
PY
