#!/usr/bin/env bash
# The live GPU suite: provokes real failures on this GPU host, one program each, keeps each
# program's own output as a log, and checks triage's analysis of it (with --verify, on this same
# host): the first root cause must be the expected taxonomy id and, where the case names a
# verifier, its verdict must be `confirmed` (and nothing right may be refuted).
#
#   tests/gpu/live/run.sh TRIAGE OUT_DIR [CASE...]      (PY: the interpreter, default
#                                                      /opt/torch/.venv/bin/python)
# OUT_DIR receives <case>.log (the program's output), <case>.json (triage's report) and
# summary.tsv. Exit status 0 when every case passed, 1 otherwise, 2 on bad usage, 77 (skipped)
# without a GPU or an interpreter.
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
triage=${1:?usage: run.sh TRIAGE OUT_DIR [CASE...]}
out=${2:?usage: run.sh TRIAGE OUT_DIR [CASE...]}
shift 2
PY=${PY:-/opt/torch/.venv/bin/python}
[ -x "$triage" ] || { echo "run.sh: not an executable: $triage" >&2; exit 2; }
# Without a GPU or the interpreter there is nothing to provoke: skipped (77, ctest's skip code).
if ! nvidia-smi -L >/dev/null 2>&1; then echo "run.sh: skipped: no GPU on this host (nvidia-smi -L fails)"; exit 77; fi
[ -x "$PY" ] || { echo "run.sh: skipped: no interpreter at $PY (set PY)"; exit 77; }
mkdir -p "$out"
venv=$(cd "$(dirname "$PY")/.." && pwd)
# The service's interpreter may run for the checks that ask it (python.env).
printf '[verify]\nallowed_prefixes = ["%s"]\n' "$venv" >"$out/config.toml"
export NCCL_NVLS_ENABLE=0

# case  expected-cause  verifier-that-must-confirm (- for none)
cases=(
  "torch_oom cuda.oom cuda.memory"
  "jax_oom cuda.oom cuda.memory"
  "cupy_oom cuda.oom cuda.memory"
  "device_assert cuda.illegal_memory_access -"
  "illegal_address cuda.illegal_memory_access -"
  "no_kernel_image cuda.no_kernel_image -"
  "no_device cuda.no_device gpu.visible"
  "bad_ordinal cuda.no_device gpu.visible"
  "host_oom host.oom_killed host.oom"
  "port_in_use net.port_in_use net.port"
  "import_error python.symbol_missing python.env"
  "missing_lib native.lib_not_found native.lib"
  "rank_dies unclassified -"
)

provoke() {  # case -> writes $out/$1.log
  local c=$1 log=$out/$1.log
  case $c in
    no_device) CUDA_VISIBLE_DEVICES= "$PY" "$here/$c.py" >"$log" 2>&1 ;;
    host_oom)
      # A cgroup (v2) with a 1 GiB limit; the shell reports the kill as bash does.
      local cg=/sys/fs/cgroup/triage-live-oom
      mkdir -p "$cg" 2>/dev/null && echo $((1 << 30)) >"$cg/memory.max" 2>/dev/null && echo 0 >"$cg/memory.swap.max" 2>/dev/null
      echo 0 >"$cg/memory.oom.group" 2>/dev/null
      # The program alone runs in the cgroup (a subshell that joins it and execs the program);
      # the shell around it, outside, waits and reports the kill as a shell does ("bash: line 1:
      # PID Killed ..."), into the log.
      bash -c '( echo $BASHPID > "$2/cgroup.procs" && exec "$0" "$1" ); true' "$PY" "$here/$c.py" "$cg" >"$log" 2>&1
      ;;
    port_in_use)
      "$PY" -m http.server 18731 --bind 127.0.0.1 >/dev/null 2>&1 &
      echo $! >"$out/.holder"
      sleep 1.5
      "$PY" "$here/$c.py" 18731 >"$log" 2>&1 ;;
    rank_dies) (cd "$out" && "$venv/bin/torchrun" --nproc_per_node=2 --master_port=29731 "$here/$c.py") >"$log" 2>&1 ;;
    *) "$PY" "$here/$c.py" >"$log" 2>&1 ;;
  esac
  return 0
}

want_cases=("$@")
status=0
printf 'case\texpected\tgot\tverdict\tresult\n' >"$out/summary.tsv"
for spec in "${cases[@]}"; do
  read -r c want verifier <<<"$spec"
  if [ ${#want_cases[@]} -gt 0 ] && ! printf '%s\n' "${want_cases[@]}" | grep -qx "$c"; then continue; fi
  provoke "$c"
  if [ "${PROVOKE_ONLY:-0}" = 1 ]; then echo "$c: $(wc -l <"$out/$c.log") lines"; continue; fi
  "$triage" analyze --config "$out/config.toml" --json --no-store --verify "$out/$c.log" >"$out/$c.json" 2>"$out/$c.err"
  [ -f "$out/.holder" ] && { kill "$(cat "$out/.holder")" 2>/dev/null; rm -f "$out/.holder"; }
  line=$("$PY" - "$out/$c.json" "$want" "$verifier" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1])); want, verifier = sys.argv[2], sys.argv[3]
causes = [c for i in doc.get("incidents", []) for c in i.get("causes", [])]
causes.sort(key=lambda c: -c.get("score", 0))
got = causes[0]["cause"] if causes else "<none>"
ok = got == want or got.startswith(want + ".")
verdict = "-"
if causes and verifier != "-":
    vs = [v for v in causes[0].get("verifications", []) if v.get("verifier") == verifier]
    verdict = vs[0]["verdict"] if vs else "<not run>"
    ok = ok and verdict == "confirmed"
refuted = [c["cause"] for c in causes if any(v.get("verdict") == "refuted" for v in c.get("verifications", []))
           and (c["cause"] == want or c["cause"].startswith(want + "."))]
ok = ok and not refuted
print("%s\t%s\t%s" % (got, verdict, "pass" if ok else "FAIL"))
PY
)
  printf '%s\t%s\t%s\n' "$c" "$want" "$line" | tee -a "$out/summary.tsv"
  case $line in *FAIL*) status=1 ;; esac
done
exit $status
