#!/usr/bin/env bash
# The GPU check of triage's verifiers and kernels, in one command, on a GPU host.
#
#   scripts/gpu-check.sh [BUNDLE_DIR] [OUT_DIR]
#
# BUNDLE_DIR (default .gpu-bundle) holds bin/: triage, triage_gpu_tests and libsimdjson.so.*, built
# on a build host with:
#   cmake -S . -B build/verify -G Ninja -DCMAKE_BUILD_TYPE=Release
#   ninja -C build/verify triage triage_gpu_tests
#   mkdir -p .gpu-bundle/bin && cp build/verify/bin/{triage,triage_gpu_tests,libsimdjson.so.*} .gpu-bundle/bin/
# OUT_DIR (default ./gpu-check-out) receives the logs: gpu-tests.log, doctor.txt,
# doctor.json, summary.txt. Exit status: 0 when every gpu test passed and none was skipped.
set -u -o pipefail
bundle=${1:-.gpu-bundle}
out=${2:-./gpu-check-out}
mkdir -p "$out"
bin="$bundle/bin"
summary="$out/summary.txt"
export NCCL_NVLS_ENABLE=0
{
  echo "date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "host: $(uname -n) $(uname -r)"
  nvidia-smi --query-gpu=index,name,driver_version,memory.total,compute_cap --format=csv,noheader 2>&1
  /usr/local/cuda/bin/nvcc --version 2>&1 | tail -1
} | tee "$summary"

status=0
echo "== gpu tests" | tee -a "$summary"
start=$(date +%s)
"$bin/triage_gpu_tests" --gtest_color=no 2>&1 | tee "$out/gpu-tests.log"
rc=$?
echo "triage_gpu_tests exit $rc in $(( $(date +%s) - start )) s" | tee -a "$summary"
grep -E '^\[  (PASSED|FAILED|SKIPPED) \]|tests? from .* ran' "$out/gpu-tests.log" | tee -a "$summary"
if [ "$rc" -ne 0 ]; then status=1; fi
if grep -q '^\[  SKIPPED \]' "$out/gpu-tests.log"; then
  echo "some gpu tests were skipped: not a pass" | tee -a "$summary"
  status=1
fi

echo "== live suite (tests/gpu/live/run.sh): failures provoked here, analysed and verified here" | tee -a "$summary"
here=$(cd "$(dirname "$0")/.." && pwd)
bash "$here/tests/gpu/live/run.sh" "$bin/triage" "$out/live" 2>&1 | tee -a "$summary"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1
echo "== host checks (tests/gpu/live/host_checks.sh): corpus with --verify, triage verify, watch --verify" | tee -a "$summary"
bash "$here/tests/gpu/live/host_checks.sh" "$bin/triage" "$out/host" 2>&1 | tee -a "$summary"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

echo "== triage doctor" | tee -a "$summary"
allow=()
for env in /opt/torch/.venv; do [ -d "$env" ] && allow+=(--allow "$env"); done
"$bin/triage" doctor --deadline 60 "${allow[@]}" 2>&1 | tee "$out/doctor.txt" | tee -a "$summary"
"$bin/triage" doctor --json --deadline 60 "${allow[@]}" > "$out/doctor.json" 2>&1 || status=1
"$bin/triage" --version 2>&1 | tee -a "$summary"
echo "gpu-check status $status" | tee -a "$summary"
exit $status
