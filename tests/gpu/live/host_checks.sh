#!/usr/bin/env bash
# The rest of the GPU host's checks, after run.sh: the development corpus analysed with and
# without --verify on this host (no right top-1 cause may change, no cause refuted), `triage
# verify ID` on a stored incident, and `triage watch --verify` storing a crash as it happens.
#
#   tests/gpu/live/host_checks.sh TRIAGE OUT_DIR [CORPUS_DIR]   (default tests/data/corpus)
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
triage=${1:?usage: host_checks.sh TRIAGE OUT_DIR [CORPUS]}
out=${2:?usage: host_checks.sh TRIAGE OUT_DIR [CORPUS]}
corpus=${3:-$here/../../data/corpus}
PY=${PY:-/opt/torch/.venv/bin/python}
mkdir -p "$out"
export HOME="$out/home" XDG_STATE_HOME="$out/state" XDG_CONFIG_HOME="$out/config" NO_COLOR=1
mkdir -p "$HOME"
status=0

echo "== corpus with and without --verify on $(uname -n)"
"$PY" - "$triage" "$corpus" "$out" <<'PY' || status=1
import json, os, subprocess, sys
triage, corpus, out = sys.argv[1:4]
cases = [json.loads(l) for l in open(os.path.join(corpus, "cases.jsonl")) if l.strip()]
def top(doc):
    cs = [c for i in doc.get("incidents", []) for c in i.get("causes", [])]
    cs.sort(key=lambda c: -c.get("score", 0))
    return cs
changed = lost = refuted_labelled = verdicts = 0
counts = {}
for c in cases:
    log = os.path.join(corpus, "cases", c["id"] + ".log")
    plain = json.loads(subprocess.run([triage, "analyze", "--json", "--no-store", log], capture_output=True).stdout or b"{}")
    ver = json.loads(subprocess.run([triage, "analyze", "--json", "--no-store", "--verify", log], capture_output=True).stdout or b"{}")
    a, b = top(plain), top(ver)
    ta = a[0]["cause"].split(".")[:2] if a else None
    tb = b[0]["cause"].split(".")[:2] if b else None
    labels = [".".join(l.split(".")[:2]) for l in (c.get("labels") or [])]
    if ta != tb:
        changed += 1
        if ta and ".".join(ta) in labels: lost += 1
    for cause in b:
        for v in cause.get("verifications", []):
            verdicts += 1
            counts[v["verdict"]] = counts.get(v["verdict"], 0) + 1
            if v["verdict"] == "refuted" and ".".join(cause["cause"].split(".")[:2]) in labels:
                refuted_labelled += 1
print("cases %d, top-1 changed %d, right top-1 lost %d, labelled causes refuted %d, verdicts %d: %s" % (
    len(cases), changed, lost, refuted_labelled, verdicts, json.dumps(counts, sort_keys=True)))
sys.exit(1 if lost or refuted_labelled else 0)
PY

echo "== triage verify ID"
db="$out/verify.db"
rm -f "$db"*
"$PY" "$here/torch_oom.py" >"$out/verify-crash.log" 2>&1
"$triage" analyze --db "$db" "$out/verify-crash.log" >/dev/null
"$triage" verify 1 --db "$db" | tee "$out/verify.txt" || status=1
grep -q "confirmed" "$out/verify.txt" || { echo "triage verify: nothing confirmed"; status=1; }

echo "== triage watch --verify"
wdir="$out/watched"
mkdir -p "$wdir"
wdb="$out/watch.db"
rm -f "$wdb"*
"$triage" watch --verify --db "$wdb" "$wdir" >"$out/watch.out" 2>&1 &
wpid=$!
sleep 3
start=$(date +%s.%N)
CUDA_VISIBLE_DEVICES=3 "$PY" "$here/bad_ordinal.py" >"$wdir/trainer.log" 2>&1
for _ in $(seq 1 40); do
  if "$triage" history --db "$wdb" --json 2>/dev/null | grep -q '"id"'; then break; fi
  sleep 0.25
done
end=$(date +%s.%N)
kill -TERM "$wpid"; wait "$wpid"
echo "stored after $("$PY" -c "print(round($end - $start, 2))") s (includes the program's own run)"
"$triage" show 1 --db "$wdb" | tee "$out/watch-show.txt" || status=1
grep -q "cuda.no_device" "$out/watch-show.txt" || { echo "watch: the crash was not stored as cuda.no_device"; status=1; }
exit $status
