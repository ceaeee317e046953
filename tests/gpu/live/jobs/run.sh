#!/usr/bin/env bash
# Two-rank NCCL jobs that fail, one rank first, each for its own reason (job_<reason>.py): the
# recordings of tests/data/jobs. Each job runs under torchrun (2 ranks, nccl; on one GPU the ranks
# share it as two hosts, see _job.py) with `--tee 3` and `--log-dir`, so that OUT_DIR/<job>/ gets
# combined.log (torchrun's console: its own lines and each rank's, prefixed [default<N>]:) and
# logs/ (torchrun's log folder: <run id>/attempt_0/<local rank>/stdout.log, stderr.log and, where
# the rank left one, error.json: torchrun points each rank's TORCHELASTIC_ERROR_FILE there) and fr/
# (the NCCL Flight Recorder's dumps, nccl_trace_rank_<rank>, where a rank's watchdog dumped: the
# recorder keeps the last 2000 collectives, TORCH_NCCL_TRACE_BUFFER_SIZE, and dumps on a
# timeout, TORCH_NCCL_DUMP_ON_TIMEOUT=1, waiting at most 10 s for the dump before the abort).
# Nothing is analysed.
#
#   tests/gpu/live/jobs/run.sh OUT_DIR [JOB...]   (PY: the interpreter, default
#                                                /opt/torch/.venv/bin/python)
# job_host_oom needs a cgroup v2 memory controller (its rank 1 joins a cgroup with a 1 GiB limit);
# without one its folder holds a SKIP file instead. A job is stopped after JOB_TIMEOUT seconds
# (default 120).
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
out=${1:?usage: run.sh OUT_DIR [JOB...]}
shift
PY=${PY:-/opt/torch/.venv/bin/python}
venv=$(cd "$(dirname "$PY")/.." && pwd)
limit=${JOB_TIMEOUT:-120}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-lo} NCCL_IB_DISABLE=1
export TORCH_NCCL_ASYNC_ERROR_HANDLING=1
export TORCH_NCCL_TRACE_BUFFER_SIZE=2000 TORCH_NCCL_DUMP_ON_TIMEOUT=1 TORCH_NCCL_WAIT_TIMEOUT_DUMP_MILSEC=10000
jobs=("$@")
[ ${#jobs[@]} -eq 0 ] && jobs=(job_oom job_segfault job_exception job_skip_allreduce job_host_oom
                              job_wrong_size job_sys_exit job_abort job_illegal_address job_hang
                              job_import job_duplicate_gpu job_clean_noise job_size_mismatch
                              job_raise_before_barrier)
mkdir -p "$out"
ulimit -c 0  # no core files of GPU processes in the job folders
port=29811
for j in "${jobs[@]}"; do
  [ -f "$here/$j.py" ] || { echo "run.sh: no job named $j" >&2; exit 2; }
  d=$out/$j
  rm -rf "$d" && mkdir -p "$d/fr"
  env=(TORCH_NCCL_DEBUG_INFO_TEMP_FILE="$d/fr/nccl_trace_rank_")
  if [ "$j" = job_host_oom ]; then
    cg=/sys/fs/cgroup/triage-jobs-oom
    if ! grep -qw memory /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
      echo "no cgroup v2 memory controller at /sys/fs/cgroup" >"$d/SKIP"; echo "$j: skip"; continue
    fi
    mkdir -p "$cg" 2>/dev/null && echo $((1 << 30)) >"$cg/memory.max" 2>/dev/null && echo 0 >"$cg/memory.swap.max" 2>/dev/null
    echo 0 >"$cg/memory.oom.group" 2>/dev/null
    if [ "$(cat "$cg/memory.max" 2>/dev/null)" != $((1 << 30)) ]; then
      echo "no 1 GiB memory limit could be set at $cg" >"$d/SKIP"; echo "$j: skip"; continue
    fi
    env+=(JOB_CGROUP="$cg")
  fi
  start=$(date +%s)
  (cd "$d" && env "${env[@]}" timeout -k 10 "$limit" "$venv/bin/torchrun" --nproc_per_node=2 \
     --master_port=$port --log-dir "$d/logs" --tee 3 "$here/$j.py") >"$d/combined.log" 2>&1
  rc=$?
  rmdir "$d/fr" 2>/dev/null
  echo "$j: exit $rc, $(($(date +%s) - start)) s, $(wc -l <"$d/combined.log") lines"
  port=$((port + 1))
done
