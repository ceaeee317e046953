#!/usr/bin/env bash
# The live GPU suite: provokes real failures on this GPU host, one program each, keeps each
# program's own output as a log, and checks triage's analysis of it (with --verify, on this same
# host): the first root cause must be the expected taxonomy id and, where the case names a
# verifier, its verdict must be `confirmed` (and nothing right may be refuted).
#
#   tests/gpu/live/run.sh TRIAGE OUT_DIR [CASE|@SET...]  (PY: the interpreter, default
#                                                       /opt/torch/.venv/bin/python)
# CASE is a case's name, @SET every case of a set: @set1 the first thirteen (GPU memory and
# kernel faults, devices, host OOM, port, Python and loader errors), @set2 those added after
# them (native crashes, JAX and CuPy without a device, other OOM paths, Triton's shared memory,
# disk full, unreadable weights, NCCL, permissions), @set3 the third (CuPy's illegal address,
# torchrun's OOM and taken port, SIGABRT and SIGILL, a GPU UUID the host lacks, a 1 MiB /dev/shm,
# NCCL without its interface, weights_only, transformers offline), @set4 the fourth (CUDA C++
# programs: cudaMalloc too large, a kernel's illegal address, a failed assert; Triton's illegal
# address; a package that is not installed), @set5 the fifth (torch.compile without a C
# compiler, a Triton kernel that does not compile, a launch of too many threads a block, a bad
# cuBLAS call, tensors on two devices, CUDA in a forked worker, a DataLoader worker's segfault,
# a JAX callback's error, XLA flags XLA no longer has, a model path that does not exist, JAX given
# a GPU index the host lacks, a hung job killed by its launcher, a per-process memory cap, a gloo
# collective one rank skips; and five benign runs, expected `none`: DDP over NCCL with its INFO
# lines, torch.compile's recompile limit, a caught OOM retried smaller, JAX's warnings, deprecated
# AMP calls); @set6 a checkpoint written to a full 1 MiB tmpfs, the verifier confirming it on
# that mount; @set7 (2026-12-07) an allocator setting PyTorch does not know, a CuPy kernel that does not compile, weights mapped to a
# GPU index the host lacks, a JAX mesh of more devices than the host has, a launch of 2048 threads
# a block, flash attention forced on a head size it lacks, a synchronizing call inside a CUDA
# graph capture, a misspelt distributed backend; @set8 (2026-12-07) an extension needing a c10
# symbol the loaded torch lacks, torch.compile's caches on a full mount, env:// without
# MASTER_ADDR, a rendezvous whose second rank never comes, a C++ extension that does not compile,
# JAX_PLATFORMS naming a platform jaxlib lacks, a model folder without its tokenizer, an NCCL
# all_reduce of a CPU tensor, a memory fraction above 1; @set9 (2026-12-07) a CUDA tensor handed to NumPy, a float16 layer given float32,
# a second JAX process on a GPU the first holds, JAX falling back to the CPU (benign), a CuPy kernel
# including a header that is not there, a Triton cache the service's user may not write, a GPU
# checkpoint loaded where no GPU is visible; @set10 (2026-12-07) a config.json of an architecture
# transformers does not know, a requirement check that the installed torch fails, an arch list
# naming no architecture, a torch.compile mode that does not exist, custom model code without
# trust_remote_code, and two benign runs (graph breaks logged with their stacks, pinned memory
# asked for with no GPU visible); @set11 (2026-12-07) a checkpoint of another model size, a
# CUDA_VISIBLE_DEVICES that names no device, torchrun given an --nproc-per-node it refuses, an
# operator without a sparse CUDA kernel, a DataLoader that times out, a WORLD_SIZE that is no number,
# and a benign run (the tokenizers library's fork warning); @set12 (2026-12-07) torch.compile's
# fullgraph refusing a graph break, a service that dropped root binding port 80, an operation
# without a deterministic implementation under use_deterministic_algorithms, a JAX contraction of
# mismatched shapes; @set13 (2026-12-07) a covariance that is not positive-definite given to
# cholesky, a NaN gradient under anomaly detection, an FFT whose output does not fit, an
# XLA_PYTHON_CLIENT_ALLOCATOR JAX does not know, a torch.hub model on a host without network, and a
# benign run (an LD_PRELOAD library that is gone); @set14 (2026-12-07) FlashAttention-2 asked of
# transformers without flash_attn, a 4-bit load without bitsandbytes, an extension built for sm_80
# only, spawned CUDA workers without a __main__ guard, and a benign run (a process group not
# destroyed at exit); @set15 (2026-12-07) an NCCL all_reduce one rank of two never joins (the
# watchdog's timeout), a process group initialised twice, GradScaler on float16 parameters, and a
# benign run (TF32 set through the old flags); @set16-pending (written 2026-12-07, not yet run on
# a GPU) DDP over a model with a head that takes no part in the loss, a DistributedSampler in a
# script run without a launcher, FSDP over int8 weights, pip given a wheel of another interpreter,
# and a benign run (the same DDP model with find_unused_parameters); @set17-pending (written
# 2026-12-07, not yet run on a GPU) deterministic algorithms with cuBLAS lacking its workspace
# setting, a TORCH_LOGS naming what PyTorch lacks, a checkpoint saved to a read-only mount, the
# toolkit's stub libcuda loaded as the driver, a Triton dot of 8x8 tiles, an NCCL_ALGO NCCL lacks,
# a GLOO_SOCKET_IFNAME the host lacks, a DataLoader worker's KeyError, a token id past the
# embedding table, and three benign runs (a fresh classifier head, float64 asked of JAX, autocast
# asked for int8). None given: every case of
# the sets that have run; a set named *-pending (its programs not yet seen to provoke their
# failure on a GPU) runs only when named, and loses the suffix once it has. A case expected `none` passes when triage finds no
# incident. NATIVE_DIR: a folder with
# the CUDA C++ programs of native/ built (nvcc -arch=sm_XX -o NATIVE_DIR/<case> native/<case>.cu). PROVOKE_ONLY=1
# provokes the failures and keeps their logs without analysing them (TRIAGE is not run then).
# OUT_DIR receives <case>.log (the program's output), <case>.json (triage's report) and
# summary.tsv. A program that cannot provoke its failure on this host (a module it needs is
# missing) prints "SKIP: why" as its first line and exits 0: its case is `skip`, no failure.
# Exit status 0 when every case passed or was skipped, 1 otherwise, 2 on bad usage, 77 (skipped)
# without a GPU or an interpreter, or when every case chosen was skipped.
set -u -o pipefail
here=$(cd "$(dirname "$0")" && pwd)
triage=${1:?usage: run.sh TRIAGE OUT_DIR [CASE|@SET...]}
out=${2:?usage: run.sh TRIAGE OUT_DIR [CASE|@SET...]}
shift 2
PY=${PY:-/opt/torch/.venv/bin/python}
if [ "${PROVOKE_ONLY:-0}" != 1 ] && [ ! -x "$triage" ]; then echo "run.sh: not an executable: $triage" >&2; exit 2; fi
# Without a GPU or the interpreter there is nothing to provoke: skipped (77, ctest's skip code).
if ! nvidia-smi -L >/dev/null 2>&1; then echo "run.sh: skipped: no GPU on this host (nvidia-smi -L fails)"; exit 77; fi
[ -x "$PY" ] || { echo "run.sh: skipped: no interpreter at $PY (set PY)"; exit 77; }
mkdir -p "$out"
venv=$(cd "$(dirname "$PY")/.." && pwd)
# The service's interpreter may run for the checks that ask it (python.env).
printf '[verify]\nallowed_prefixes = ["%s"]\n' "$venv" >"$out/config.toml"
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1

# case  expected-cause  verifier-that-must-confirm (- for none)  set
cases=(
  "torch_oom cuda.oom cuda.memory set1"
  "jax_oom cuda.oom cuda.memory set1"
  "cupy_oom cuda.oom cuda.memory set1"
  "device_assert cuda.illegal_memory_access - set1"
  "illegal_address cuda.illegal_memory_access - set1"
  "no_kernel_image cuda.no_kernel_image - set1"
  "no_device cuda.no_device gpu.visible set1"
  "bad_ordinal cuda.no_device gpu.visible set1"
  "host_oom host.oom_killed host.oom set1"
  "port_in_use net.port_in_use net.port set1"
  "import_error python.symbol_missing python.env set1"
  "missing_lib native.lib_not_found native.lib set1"
  "rank_dies unclassified - set1"
  "segfault native.crash - set2"
  "double_free native.crash - set2"
  "jax_no_device cuda.no_device gpu.visible set2"
  "cupy_bad_device cuda.no_device gpu.visible set2"
  "torch_oom_growing cuda.oom - set2"
  "cublas_oom cuda.oom - set2"
  "misaligned_address cuda.illegal_memory_access - set2"
  "triton_smem config.invalid - set2"
  "disk_full host.disk_full - set2"
  "disk_full_mount host.disk_full host.disk set6"
  "safetensors_truncated model.load_failed - set2"
  "torch_load_truncated model.load_failed - set2"
  "hf_config_missing model.load_failed - set2"
  "nccl_duplicate_gpu nccl.failure - set2"
  "permission_denied host.permission host.path set2"
  "cupy_illegal_address cuda.illegal_memory_access - set3"
  "torchrun_oom cuda.oom cuda.memory set3"
  "torchrun_port_in_use net.port_in_use net.port set3"
  "sigabrt native.crash - set3"
  "sigill native.crash - set3"
  "no_gpu_bad_uuid cuda.no_device gpu.visible set3"
  "shm_exhausted host.shm_exhausted - set3"
  "nccl_bad_ifname nccl.failure - set3"
  "torch_weights_only model.load_failed - set3"
  "hf_offline_uncached model.load_failed - set3"
  "cuda_cpp_oom cuda.oom - set4"
  "cuda_cpp_illegal cuda.illegal_memory_access - set4"
  "cpp_assert native.crash - set4"
  "triton_illegal_address cuda.illegal_memory_access - set4"
  "module_missing python.module_missing - set4"
  "inductor_no_compiler jit.build_failed - set5"
  "triton_compile_error jit.build_failed - set5"
  "cuda_cpp_bad_launch config.invalid - set5"
  "cublas_invalid_value unclassified - set5"
  "device_mismatch unclassified - set5"
  "fork_reinit unclassified - set5"
  "dataloader_worker_segv native.crash - set5"
  "jax_callback_error unclassified - set5"
  "jax_unknown_xla_flag config.invalid - set5"
  "hf_model_path_missing model.load_failed - set5"
  "jax_bad_visible_device cuda.no_device - set5"
  "killed_hung_job unclassified - set5"
  "mem_fraction_oom cuda.oom - set5"
  "gloo_rank_skips nccl.failure - set5"
  "ddp_nccl_ok none - set5"
  "compile_recompile_ok none - set5"
  "oom_retry_ok none - set5"
  "jax_warnings_ok none - set5"
  "amp_deprecated_ok none - set5"
  "alloc_conf_bad config.invalid - set7"
  "nvrtc_compile_error jit.build_failed - set7"
  "load_missing_device cuda.no_device - set7"
  "jax_mesh_too_many config.invalid - set7"
  "cupy_bad_block config.invalid - set7"
  "sdpa_no_kernel config.invalid - set7"
  "graph_capture_sync unclassified - set7"
  "bad_backend config.invalid - set7"
  "ext_undefined_symbol native.undefined_symbol - set8"
  "inductor_cache_full host.disk_full host.disk set8"
  "dist_no_master_addr config.invalid - set8"
  "dist_rendezvous_timeout nccl.failure - set8"
  "load_inline_syntax jit.build_failed - set8"
  "jax_bad_platform config.invalid - set8"
  "hf_tokenizer_missing model.load_failed - set8"
  "nccl_cpu_tensor config.invalid - set8"
  "mem_fraction_invalid config.invalid - set8"
  "numpy_from_cuda unclassified - set9"
  "matmul_dtype_mismatch unclassified - set9"
  "jax_two_processes_oom cuda.oom - set9"
  "jax_cpu_fallback_ok none - set9"
  "cupy_missing_header jit.build_failed - set9"
  "triton_cache_denied host.permission - set9"
  "torch_load_no_gpu cuda.no_device - set9"
  "hf_unknown_model_type engine.model_unsupported - set10"
  "hf_require_version python.version_conflict - set10"
  "cuda_arch_list_bad config.invalid - set10"
  "compile_mode_bad config.invalid - set10"
  "hf_remote_code config.invalid - set10"
  "compile_graph_break_ok none - set10"
  "pin_memory_no_gpu_ok none - set10"
  "state_dict_size_mismatch model.load_failed - set11"
  "cvd_invalid cuda.no_device - set11"
  "torchrun_bad_nproc config.invalid - set11"
  "sparse_cuda_unsupported unclassified - set11"
  "dataloader_timeout unclassified - set11"
  "dist_world_size_invalid config.invalid - set11"
  "tokenizers_fork_ok none - set11"
  "compile_fullgraph_unsupported unclassified - set12"
  "port_privileged host.permission - set12"
  "histc_deterministic config.invalid - set12"
  "jax_dot_shape unclassified - set12"
  "cholesky_not_pd unclassified - set13"
  "anomaly_nan unclassified - set13"
  "ld_preload_missing_ok none - set13"
  "cufft_oom cuda.oom - set13"
  "xla_allocator_bad config.invalid - set13"
  "torch_hub_offline model.load_failed - set13"
  "hf_flash_attn_missing python.module_missing - set14"
  "hf_bnb_missing python.module_missing - set14"
  "ext_arch_mismatch cuda.no_kernel_image - set14"
  "spawn_no_main_guard unclassified - set14"
  "pg_not_destroyed_ok none - set14"
  "nccl_watchdog_timeout nccl.failure - set15"
  "dist_init_twice unclassified - set15"
  "amp_unscale_fp16 unclassified - set15"
  "tf32_setting_ok none - set15"
  "ddp_unused_params config.invalid - set16-pending"
  "ddp_find_unused_ok none - set16-pending"
  "dist_sampler_no_pg config.invalid - set16-pending"
  "fsdp_int_weights config.invalid - set16-pending"
  "pip_wheel_tag python.version_conflict - set16-pending"
  "cublas_workspace_unset config.invalid - set17-pending"
  "torch_logs_bad config.invalid - set17-pending"
  "readonly_checkpoint host.permission - set17-pending"
  "stub_libcuda cuda.no_device - set17-pending"
  "triton_dot_small jit.build_failed - set17-pending"
  "nccl_algo_bad config.invalid - set17-pending"
  "gloo_ifname_bad nccl.failure - set17-pending"
  "dataloader_worker_keyerror unclassified - set17-pending"
  "embedding_oob cuda.illegal_memory_access - set17-pending"
  "hf_missing_weights_ok none - set17-pending"
  "jax_x64_ok none - set17-pending"
  "autocast_int8_ok none - set17-pending"
)

# A program that hangs instead of failing is stopped after this many seconds, CASE_TIMEOUT
# (its log then ends without the failure, and the case fails).
limit=${CASE_TIMEOUT:-120}

# A 1 MiB tmpfs at $1, left mounted until release_holder (it names it in $out/.mount); where none
# can be mounted (root is needed) the case's log $2 says SKIP and the call fails.
small_tmpfs() {
  mkdir -p "$1"
  if ! mount -t tmpfs -o size=1m tmpfs "$1" 2>/dev/null; then
    echo "SKIP: no tmpfs could be mounted at $1 (root is needed)" >"$2"
    return 1
  fi
  echo "$1" >"$out/.mount"
}

provoke() {  # case -> writes $out/$1.log
  local c=$1 log=$out/$1.log
  case $c in
    no_device) CUDA_VISIBLE_DEVICES= timeout -k 5 "$limit" "$PY" "$here/$c.py" >"$log" 2>&1 ;;
    jax_no_device|pin_memory_no_gpu_ok) CUDA_VISIBLE_DEVICES= timeout -k 5 "$limit" "$PY" "$here/$c.py" >"$log" 2>&1 ;;
    host_oom)
      # A cgroup (v2) with a 1 GiB limit; the shell reports the kill as bash does. Nothing else
      # bounds the program: without a cgroup v2 memory controller (on a cgroup v1 host
      # /sys/fs/cgroup may be a tmpfs, where mkdir and echo make plain files), or where the
      # limit did not take, it would fill the host's memory. Skipped there.
      local cg=/sys/fs/cgroup/triage-live-oom
      if ! grep -qw memory /sys/fs/cgroup/cgroup.subtree_control 2>/dev/null; then
        echo "SKIP: no cgroup v2 memory controller at /sys/fs/cgroup" >"$log"
        return 0
      fi
      mkdir -p "$cg" 2>/dev/null && echo $((1 << 30)) >"$cg/memory.max" 2>/dev/null && echo 0 >"$cg/memory.swap.max" 2>/dev/null
      echo 0 >"$cg/memory.oom.group" 2>/dev/null
      if [ "$(cat "$cg/memory.max" 2>/dev/null)" != $((1 << 30)) ]; then
        echo "SKIP: no 1 GiB memory limit could be set at $cg" >"$log"
        return 0
      fi
      # The program alone runs in the cgroup (a subshell that joins it and execs the program);
      # the shell around it, outside, waits and reports the kill as a shell does ("bash: line 1:
      # PID Killed ..."), into the log.
      bash -c '( echo $BASHPID > "$2/cgroup.procs" && exec "$0" "$1" ); true' "$PY" "$here/$c.py" "$cg" >"$log" 2>&1
      ;;
    double_free)
      # The service's wrapper shell runs the command line as written in it and reports the abort
      # into the log ("bash: line 1: PID Aborted  /opt/.../python .../double_free.py", with
      # "(core dumped)" after "Aborted" where this host's core limit allows a core). glibc writes
      # its own message to stderr, not the terminal (LIBC_FATAL_STDERR_).
      LIBC_FATAL_STDERR_=1 timeout -k 5 "$limit" bash -c "$(printf '%q %q' "$PY" "$here/$c.py"); true" >"$log" 2>&1 ;;
    port_in_use)
      "$PY" -m http.server 18731 --bind 127.0.0.1 >/dev/null 2>&1 &
      echo $! >"$out/.holder"
      sleep 1.5
      "$PY" "$here/$c.py" 18731 >"$log" 2>&1 ;;
    segfault)
      # No timeout around it: a null pointer's read cannot hang, and timeout would add its own
      # line ("the monitored command dumped core") to the program's output where cores are on.
      "$PY" "$here/$c.py" >"$log" 2>&1 ;;
    permission_denied)
      # The log file an earlier run as root left behind, for root alone (0600); the program drops
      # to nobody before it opens it. Not root here: mode 0000 closes it to its owner as well.
      local logs=$out/service-logs
      mkdir -p "$logs" && : >"$logs/service.log"
      if [ "$(id -u)" = 0 ]; then chmod 0600 "$logs/service.log"; else chmod 0000 "$logs/service.log"; fi
      timeout -k 5 "$limit" "$PY" "$here/$c.py" "$logs/service.log" >"$log" 2>&1 ;;
    rank_dies) (cd "$out" && "$venv/bin/torchrun" --nproc_per_node=2 --master_port=29731 "$here/$c.py") >"$log" 2>&1 ;;
    nccl_watchdog_timeout)
      (cd "$out" && timeout -k 5 "$limit" "$venv/bin/torchrun" --nproc_per_node=2 --master_port=29743 "$here/$c.py") >"$log" 2>&1 ;;
    nccl_duplicate_gpu)
      (cd "$out" && timeout -k 5 "$limit" "$venv/bin/torchrun" --nproc_per_node=2 --master_port=29733 "$here/$c.py") >"$log" 2>&1 ;;
    cvd_invalid) CUDA_VISIBLE_DEVICES=gpu0 timeout -k 5 "$limit" "$PY" "$here/$c.py" >"$log" 2>&1 ;;
    torchrun_bad_nproc)
      (cd "$out" && timeout -k 5 "$limit" "$venv/bin/torchrun" --nproc-per-node=eight --master_port=29739 "$here/$c.py") >"$log" 2>&1 ;;
    torchrun_oom)
      (cd "$out" && timeout -k 5 "$limit" "$venv/bin/torchrun" --nproc_per_node=1 --master_port=29735 "$here/$c.py") >"$log" 2>&1 ;;
    torchrun_port_in_use)
      "$PY" -m http.server 29737 --bind 0.0.0.0 >/dev/null 2>&1 &
      echo $! >"$out/.holder"
      sleep 1.5
      (cd "$out" && timeout -k 5 "$limit" "$venv/bin/torchrun" --nproc_per_node=1 --master_port=29737 "$here/$c.py") >"$log" 2>&1 ;;
    sigabrt | sigill)
      # The service's wrapper shell reports the signal into the log, as double_free's does.
      timeout -k 5 "$limit" bash -c "$(printf '%q %q' "$PY" "$here/$c.py"); true" >"$log" 2>&1 ;;
    no_gpu_bad_uuid)
      CUDA_VISIBLE_DEVICES=GPU-00000000-0000-0000-0000-000000000000 timeout -k 5 "$limit" "$PY" "$here/$c.py" >"$log" 2>&1 ;;
    shm_exhausted)
      # /dev/shm of 1 MiB in a mount namespace of the program's own (root, with unshare(1));
      # skipped where one cannot be made.
      if ! unshare -m true 2>/dev/null; then
        echo "SKIP: no mount namespace (unshare -m) for a small /dev/shm" >"$log"
        return 0
      fi
      timeout -k 5 "$limit" unshare -m bash -c 'mount -t tmpfs -o size=1m tmpfs /dev/shm && exec "$0" "$1"' "$PY" "$here/$c.py" >"$log" 2>&1 ;;
    nccl_bad_ifname)
      (cd "$out" && NCCL_SOCKET_IFNAME=nosuchif0 timeout -k 5 "$limit" "$venv/bin/torchrun" --nproc_per_node=1 --master_port=29739 "$here/$c.py") >"$log" 2>&1 ;;
    disk_full_mount)
      # A 1 MiB tmpfs that the checkpoint (4 MiB) fills; it stays mounted while triage checks
      # the mount the log names (host.disk), and goes before the next case. Root only.
      local full=$out/full-mount
      small_tmpfs "$full" "$log" || return 0
      timeout -k 5 "$limit" "$PY" "$here/disk_full.py" "$full/ckpt.pt" >"$log" 2>&1 ;;
    inductor_cache_full)
      # The compile caches on a 1 MiB tmpfs filled before the program starts; it stays mounted
      # while triage checks the mount (host.disk). Root only.
      local full=$out/full-cache
      small_tmpfs "$full" "$log" || return 0
      mkdir -p "$full/inductor" "$full/triton"
      head -c 2M /dev/zero >"$full/filler" 2>/dev/null
      timeout -k 5 "$limit" env TORCHINDUCTOR_CACHE_DIR="$full/inductor" TRITON_CACHE_DIR="$full/triton" \
        "$PY" "$here/$c.py" >"$log" 2>&1 ;;
    jax_two_processes_oom)
      # The first process holds its preallocation in the background until release_holder; the
      # second asks for the CUDA backend only (no CPU to fall back to).
      HOLD=1 "$PY" "$here/$c.py" 600 >"$out/.holder.log" 2>&1 &
      echo $! >"$out/.holder"
      for _ in $(seq 1 120); do grep -q '^holding' "$out/.holder.log" 2>/dev/null && break; sleep 0.5; done
      JAX_PLATFORMS=cuda timeout -k 5 "$limit" "$PY" "$here/$c.py" >"$log" 2>&1 ;;
    jax_cpu_fallback_ok)
      CUDA_VISIBLE_DEVICES= timeout -k 5 "$limit" "$PY" "$here/$c.py" >"$log" 2>&1 ;;
    triton_cache_denied)
      # root's folder, closed to others; the program drops to nobody. Root only.
      if [ "$(id -u)" != 0 ]; then echo "SKIP: the program must start as root to drop to nobody" >"$log"; return 0; fi
      local cache=$out/root-triton-cache
      rm -rf "$cache" && mkdir -p "$cache" && chmod 0700 "$cache"
      TRITON_CACHE_DIR=$cache timeout -k 5 "$limit" "$PY" "$here/$c.py" >"$log" 2>&1 ;;
    port_privileged)
      if [ "$(id -u)" != 0 ]; then echo "SKIP: the program must start as root to drop to nobody" >"$log"; return 0; fi
      timeout -k 5 "$limit" "$PY" "$here/$c.py" >"$log" 2>&1 ;;
    torch_load_no_gpu)
      CUDA_VISIBLE_DEVICES= SAVE_DEVICES=0 timeout -k 5 "$limit" "$PY" "$here/$c.py" >"$log" 2>&1 ;;
    jax_bad_platform)
      JAX_PLATFORMS=rocm timeout -k 5 "$limit" "$PY" "$here/$c.py" >"$log" 2>&1 ;;
    alloc_conf_bad)
      PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True,bogus_key:1 timeout -k 5 "$limit" "$PY" "$here/$c.py" >"$log" 2>&1 ;;
    hf_offline_uncached)
      HF_HUB_OFFLINE=1 timeout -k 5 "$limit" "$PY" "$here/$c.py" >"$log" 2>&1 ;;
    cuda_cpp_oom | cuda_cpp_illegal | cpp_assert | cuda_cpp_bad_launch)
      # CUDA C++ programs (native/<case>.cu): from NATIVE_DIR when built elsewhere (the build host
      # has nvcc), else built here with nvcc, else skipped. The wrapper shell reports an abort.
      local bin=${NATIVE_DIR:-}/$c
      if [ -z "${NATIVE_DIR:-}" ] || [ ! -x "$bin" ]; then
        bin=$out/native/$c
        mkdir -p "$out/native"
        if ! command -v nvcc >/dev/null || ! nvcc -O2 -o "$bin" "$here/native/$c.cu" >"$out/native/$c.build" 2>&1; then
          echo "SKIP: no built $c (NATIVE_DIR) and no nvcc to build it" >"$log"
          return 0
        fi
      fi
      timeout -k 5 "$limit" bash -c "$(printf '%q' "$bin"); true" >"$log" 2>&1 ;;
    inductor_no_compiler)
      # A PATH of the interpreter's folder alone (no gcc, cc or clang on it), no CC, and caches
      # of its own, so that no launcher built earlier is found there.
      local caches=$out/.cache-$c
      rm -rf "$caches" && mkdir -p "$caches"
      timeout -k 5 "$limit" env -u CC -u CXX PATH="$venv/bin" TRITON_CACHE_DIR="$caches/triton" \
        TORCHINDUCTOR_CACHE_DIR="$caches/inductor" "$PY" "$here/$c.py" >"$log" 2>&1 ;;
    jax_bad_visible_device)
      # The first index past the host's GPUs.
      CUDA_VISIBLE_DEVICES=$(nvidia-smi -L | wc -l) timeout -k 5 "$limit" "$PY" "$here/$c.py" >"$log" 2>&1 ;;
    killed_hung_job)
      # The launcher's deadline: the job runs in the background of a wrapper shell that kills it
      # with SIGKILL after 15 s and reports its status (bash prints "Killed" for it).
      timeout -k 5 "$limit" bash -c "$(printf '%q %q' "$PY" "$here/$c.py") & pid=\$!; sleep 15; kill -9 \$pid; wait \$pid; echo \"exit status \$?\"" >"$log" 2>&1 ;;
    gloo_rank_skips)
      (cd "$out" && timeout -k 5 "$limit" "$venv/bin/torchrun" --nproc_per_node=2 --master_port=29741 "$here/$c.py") >"$log" 2>&1 ;;
    ddp_nccl_ok)
      # Two ranks on one GPU connect as two hosts (NCCL_HOSTID, set by the program) over sockets.
      (cd "$out" && NCCL_DEBUG=INFO NCCL_SOCKET_IFNAME=${NCCL_SOCKET_IFNAME:-lo} timeout -k 5 "$limit" \
        "$venv/bin/torchrun" --nproc_per_node=2 --master_port=29743 "$here/$c.py") >"$log" 2>&1 ;;
    cublas_workspace_unset)
      env -u CUBLAS_WORKSPACE_CONFIG timeout -k 5 "$limit" "$PY" "$here/$c.py" >"$log" 2>&1 ;;
    torch_logs_bad)
      TORCH_LOGS=+dynamo,recompiles_verbose_all timeout -k 5 "$limit" "$PY" "$here/$c.py" >"$log" 2>&1 ;;
    readonly_checkpoint)
      # A tmpfs mounted read-only, left mounted while triage checks the path. Root only.
      local ro=$out/ro-mount
      mkdir -p "$ro"
      if ! mount -t tmpfs -o size=1m,ro tmpfs "$ro" 2>/dev/null; then
        echo "SKIP: no read-only tmpfs could be mounted at $ro (root is needed)" >"$log"
        return 0
      fi
      echo "$ro" >"$out/.mount"
      timeout -k 5 "$limit" "$PY" "$here/$c.py" "$ro/checkpoints/step_100.pt" >"$log" 2>&1 ;;
    stub_libcuda)
      # The toolkit's stub (STUB_LIBCUDA, else the toolkit's own lib64/stubs) under the driver
      # library's name, first on LD_LIBRARY_PATH.
      local stub=${STUB_LIBCUDA:-/usr/local/cuda/lib64/stubs/libcuda.so}
      if [ ! -f "$stub" ]; then echo "SKIP: no stub libcuda.so at $stub (set STUB_LIBCUDA)" >"$log"; return 0; fi
      mkdir -p "$out/stubs" && ln -sf "$stub" "$out/stubs/libcuda.so.1"
      LD_LIBRARY_PATH="$out/stubs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" timeout -k 5 "$limit" "$PY" "$here/$c.py" >"$log" 2>&1 ;;
    nccl_algo_bad)
      (cd "$out" && NCCL_ALGO=Butterfly timeout -k 5 "$limit" "$venv/bin/torchrun" --nproc_per_node=1 --master_port=29745 "$here/$c.py") >"$log" 2>&1 ;;
    gloo_ifname_bad)
      (cd "$out" && GLOO_SOCKET_IFNAME=nosuchif1 timeout -k 5 "$limit" "$venv/bin/torchrun" --nproc_per_node=1 --master_port=29747 "$here/$c.py") >"$log" 2>&1 ;;
    *) timeout -k 5 "$limit" "$PY" "$here/$c.py" >"$log" 2>&1 ;;
  esac
  return 0
}

# The port's holder stays while triage checks who holds the port (net.port), and a full mount
# while it checks the mount (host.disk); both go before the next case (also with PROVOKE_ONLY, which checks nothing).
release_holder() {
  [ -f "$out/.holder" ] && { kill "$(cat "$out/.holder")" 2>/dev/null; rm -f "$out/.holder"; }
  [ -f "$out/.mount" ] && { umount "$(cat "$out/.mount")" 2>/dev/null; rm -f "$out/.mount"; }
  return 0
}

# Each argument must name a case or a set: a misspelt one would leave a run that checks nothing.
want_cases=("$@")
for w in "${want_cases[@]}"; do
  found=0
  for spec in "${cases[@]}"; do
    read -r c _ _ set <<<"$spec"
    if [ "$w" = "$c" ] || [ "$w" = "@$set" ]; then found=1; break; fi
  done
  [ $found = 1 ] || { echo "run.sh: no case or set named $w" >&2; exit 2; }
done
chosen() {  # case set -> whether the arguments chose it (no arguments: every case of a set run before)
  [ ${#want_cases[@]} -eq 0 ] && { [[ $2 != *-pending ]]; return; }
  printf '%s\n' "${want_cases[@]}" | grep -qx -e "$1" -e "@$2"
}

status=0
ran=0
skipped=0
printf 'case\texpected\tgot\tverdict\tresult\n' >"$out/summary.tsv"
for spec in "${cases[@]}"; do
  read -r c want verifier set <<<"$spec"
  chosen "$c" "$set" || continue
  provoke "$c"
  if head -n 1 "$out/$c.log" | grep -q '^SKIP:'; then
    release_holder
    printf '%s\t%s\t-\t-\tskip (%s)\n' "$c" "$want" "$(head -n 1 "$out/$c.log" | cut -c7-)" | tee -a "$out/summary.tsv"
    skipped=$((skipped + 1))
    continue
  fi
  ran=$((ran + 1))
  if [ "${PROVOKE_ONLY:-0}" = 1 ]; then release_holder; echo "$c: $(wc -l <"$out/$c.log") lines"; continue; fi
  "$triage" analyze --config "$out/config.toml" --json --no-store --verify "$out/$c.log" >"$out/$c.json" 2>"$out/$c.err"
  release_holder
  line=$("$PY" - "$out/$c.json" "$want" "$verifier" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1])); want, verifier = sys.argv[2], sys.argv[3]
causes = [c for i in doc.get("incidents", []) for c in i.get("causes", [])]
causes.sort(key=lambda c: -c.get("score", 0))
got = causes[0]["cause"] if causes else "<none>"
ok = got == want or got.startswith(want + ".")
if want == "none":  # a benign run: no incident at all
    ok = not doc.get("incidents")
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
if [ $ran -eq 0 ] && [ $skipped -gt 0 ]; then echo "run.sh: every case chosen was skipped"; exit 77; fi
exit $status
