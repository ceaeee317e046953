"""Tests of scripts/vocab/classify.py (the classification procedure), its exception list, the
remedies of rules/sites/remedies.toml and scripts/vocab/stats.py.

    python3 -m unittest discover -s scripts/vocab/tests -t scripts/vocab   (from the repository root)

The rows below are written from messages the projects print (their wording kept, their
placeholders as the extractor writes them: {*}); each names the id the procedure must give.
"""
import contextlib
import io
import json
import os
import subprocess
import sys
import tempfile
import time
import tomllib
import unittest

sys.dont_write_bytecode = True
HERE = os.path.dirname(os.path.abspath(__file__))
VOCAB = os.path.dirname(HERE)
ROOT = os.path.dirname(os.path.dirname(VOCAB))
sys.path.insert(0, VOCAB)
import classify  # noqa: E402
import stats  # noqa: E402

LANG = {".py": "python", ".go": "go", ".rs": "rust"}


def row(origin, site, form, exc="", level="error", template=None, lang=None):
    path = origin.rsplit(":", 1)[0]
    if lang is None:
        lang = LANG.get(os.path.splitext(path)[1], "cpp")
    forms = form if isinstance(form, list) else [form]
    return {"origin": origin, "lang": lang, "site": site, "level": level, "exc": exc,
            "template": template if template is not None else '"%s"' % forms[0], "forms": forms}


# (project, row, expected id)
CASES = [
    # cuda.oom
    ("pytorch", row("c10/cuda/CUDACachingAllocator.cpp:1150", "TORCH_CHECK_WITH",
                    "CUDA out of memory. Tried to allocate {*}. GPU {*} has a total capacity of {*} of which {*} is free.",
                    exc="c10::OutOfMemoryError"), "cuda.oom"),
    ("comfyui", row("comfy/model_management.py:700", "raise RuntimeError",
                    "CUDA out of memory. Tried to allocate {*} MiB"), "cuda.oom"),
    ("vllm", row("vllm/v1/core/kv_cache_utils.py:540", "raise ValueError",
                 "The model's max seq len ({*}) is larger than the maximum number of tokens that can be stored in KV "
                 "cache ({*}). Try increasing `gpu_memory_utilization` or decreasing `max_model_len` when initializing "
                 "the engine."), "cuda.oom"),
    ("vllm", row("vllm/worker/worker.py:200", "raise ValueError",
                 "No available memory for the cache blocks. Try increasing `gpu_memory_utilization` when initializing "
                 "the engine."), "cuda.oom"),
    ("vllm", row("vllm/utils.py:2100", "raise ValueError",
                 "Free memory on device ({*}/{*} GiB) on startup is less than desired GPU memory utilization ({*}, {*} "
                 "GiB). Decrease GPU memory utilization or reduce GPU memory used by other processes."), "cuda.oom"),
    ("sglang", row("python/sglang/srt/model_executor/model_runner.py:900", "raise RuntimeError",
                   "Not enough memory. Please try to increase --mem-fraction-static."), "cuda.oom"),
    ("text_generation_inference", row("server/text_generation_server/models/flash_causal_lm.py:1550", "raise RuntimeError",
                                      "Not enough memory to handle {*} prefill tokens. You need to decrease "
                                      "`--max-batch-prefill-tokens`"), "cuda.oom"),
    ("llama_cpp", row("ggml/src/ggml-cuda/ggml-cuda.cu:649", "GGML_LOG_ERROR",
                      "{*}: allocating {*} MiB on device {*}: cudaMalloc failed: {*}"), "cuda.oom"),
    ("xla", row("xla/stream_executor/cuda/cuda_executor.cc:700", "absl::ResourceExhaustedError",
                "Out of memory while trying to allocate {*} bytes.", exc="ResourceExhausted"), "cuda.oom"),
    # host.oom_killed
    ("ray", row("python/ray/_private/worker.py:900", "raise OutOfMemoryError",
                "Task was killed due to the node running low on memory.", exc="OutOfMemoryError"), "host.oom_killed"),
    ("megatron", row("megatron/training/utils.py:50", "logger.error",
                     "Worker was OOM-killed by the kernel; reduce --num-workers"), "host.oom_killed"),
    # python.module_missing / symbol_missing / version_conflict
    ("transformers", row("src/transformers/utils/import_utils.py:1500", "raise ModuleNotFoundError",
                         "No module named '{*}'", exc="ModuleNotFoundError"), "python.module_missing"),
    ("transformers", row("src/transformers/utils/import_utils.py:1700", "raise ImportError",
                         "{*} requires the {*} library but it was not found in your environment. You can install it "
                         "with pip: `pip install {*}`", exc="ImportError"), "python.module_missing"),
    ("accelerate", row("src/accelerate/commands/launch.py:1037", "raise ImportError",
                       "DeepSpeed is not installed => run `pip3 install deepspeed` or build it from source.",
                       exc="ImportError"), "python.module_missing"),
    ("accelerate", row("src/accelerate/utils/transformer_engine.py:147", "raise ImportError",
                       "Using `apply_fp8_autowrap` requires transformer_engine to be installed.", exc="ImportError"),
     "python.module_missing"),
    ("vllm", row("vllm/utils.py:300", "raise ImportError", "cannot import name '{*}' from '{*}'", exc="ImportError"),
     "python.symbol_missing"),
    ("jax", row("jax/_src/deprecations.py:57", "raise AttributeError", "module {*} has no attribute {*}",
                exc="AttributeError"), "python.symbol_missing"),
    ("accelerate", row("src/accelerate/accelerator.py:385", "raise ValueError", "FSDP requires PyTorch >= {*}",
                       exc="ValueError"), "python.version_conflict"),
    ("numpy_users", row("torch/_numpy_compat.py:10", "warnings.warn",
                        "A module that was compiled using NumPy 1.x cannot be run in NumPy {*} as it may crash.",
                        level="hint"), "python.version_conflict"),
    ("jax", row("jax/_src/lib/__init__.py:70", "raise RuntimeError",
                "jaxlib version {*} is newer than and incompatible with jax version {*}. Please update your jax and/or "
                "jaxlib packages.", exc="RuntimeError"), "python.version_conflict"),
    ("xformers", row("xformers/_cpp_lib.py:120", "logger.warning",
                     "xFormers can't load C++/CUDA extensions. xFormers was built for: PyTorch {*} with CUDA {*} "
                     "(you have {*})", level="hint"), "python.version_conflict"),
    ("flashinfer", row("flashinfer/jit/env.py:97", "raise RuntimeError",
                       "flashinfer-cubin version ({*}) does not match flashinfer version ({*}). Please install the same "
                       "version of both packages.", exc="RuntimeError"), "python.version_conflict"),
    # config.invalid
    ("vllm", row("vllm/config.py:700", "raise ValueError", "Unknown quantization method: {*}. Must be one of {*}.",
                 exc="ValueError"), "config.invalid"),
    ("vllm", row("vllm/config.py:1200", "raise ValueError",
                 "Total number of attention heads ({*}) must be divisible by tensor parallel size ({*}).",
                 exc="ValueError"), "config.invalid"),
    ("vllm", row("vllm/config.py:1250", "raise ValueError",
                 "Bfloat16 is only supported on GPUs with compute capability of at least 8.0. Your {*} GPU {*}. You "
                 "can use float16 instead by explicitly setting the `dtype` flag in CLI, for example: --dtype=half.",
                 exc="ValueError"), "config.invalid"),
    ("vllm", row("vllm/envs.py:80", "raise ValueError", "Invalid value '{*}' for {*}. Valid options: {*}.",
                 exc="ValueError", template='f"Invalid value \'{value}\' for {env_name}. Valid options: {choices}."'),
     "config.invalid"),
    ("sglang", row("python/sglang/srt/server_args.py:1400", "parser.error", "unrecognized arguments: {*}"),
     "config.invalid"),
    ("pytorch", row("c10/cuda/CUDAAllocatorConfig.cpp:300", "TORCH_CHECK", "Unrecognized CachingAllocator option: {*}",
                    exc="c10::Error"), "config.invalid"),
    ("llama_cpp", row("common/arg.cpp:400", "throw std::invalid_argument", "error: unknown argument: {*}",
                      exc="std::invalid_argument"), "config.invalid"),
    ("xla", row("xla/tsl/util/command_line_flags.cc:120", "LOG(ERROR)", "Unknown command line flag '{*}'"),
     "config.invalid"),
    ("k8s_device_plugin", row("cmd/nvidia-device-plugin/main.go:206", "fmt.Errorf",
                              "invalid --device-list-strategy option: {*}"), "config.invalid"),
    ("ollama", row("envconfig/config.go:263", "slog.Warn", "invalid environment variable, using default",
                   level="hint"), "config.invalid"),
    ("text_generation_inference", row("server/text_generation_server/utils/quantization.py:221", "raise ValueError",
                                      "Unknown quantization method: {*}", exc="ValueError"), "config.invalid"),
    ("flashinfer", row("flashinfer/utils.py:1510", "raise ValueError",
                       "FLASHINFER_CONFIDENTIAL_COMPUTE must be '0' or '1', got {*}", exc="ValueError"),
     "config.invalid"),
    ("pytorch", row("torch/_inductor/__init__.py:375", "raise RuntimeError",
                    "Unrecognized mode={*}, should be one of: {*}", exc="RuntimeError"), "config.invalid"),
    ("ray", row("python/ray/tune/tune.py:609", "raise ValueError",
                "The `mode` parameter passed to `{*}` must be one of ['min', 'max']", exc="ValueError"),
     "config.invalid"),
    # a call's signature or a tensor's layout refused with its choices: the calling code's fault
    ("pytorch", row("torch/storage.py:810", "raise RuntimeError",
                    "TypedStorage.__init__ received an invalid combination of arguments. Expected one of: {*}",
                    exc="RuntimeError"), "unclassified"),
    ("xla", row("xla/service/gpu/stream_executor_util.cc:244", "return Internal",
                "Invalid input layout {*} for conv with dnums {*}; expected one of ({*}, {*}, {*})"), "unclassified"),
    ("triton", row("python/triton/runtime/jit.py:500", "raise OutOfResources",
                   "out of resource: shared memory, Required: {*}, Hardware limit: {*}. Reducing block sizes or "
                   "`num_stages` may help.", exc="OutOfResources"), "lib.arch_unsupported"),
    # lib.arch_unsupported
    ("flash_attention", row("csrc/flash_attn/flash_api.cpp:393", "TORCH_CHECK",
                            "FlashAttention only supports Ampere GPUs or newer.", exc="c10::Error"),
     "lib.arch_unsupported"),
    ("flashinfer", row("flashinfer/jit/core.py:109", "raise RuntimeError",
                       "FlashInfer requires GPUs with sm75 or higher", exc="RuntimeError"), "lib.arch_unsupported"),
    ("vllm", row("vllm/config.py:650", "raise ValueError",
                 "The quantization method {*} is not supported for the current GPU. Minimum capability: {*}. Current "
                 "capability: {*}.", exc="ValueError"), "lib.arch_unsupported"),
    ("text_generation_inference", row("server/text_generation_server/layers/marlin/util.py:25",
                                      "raise NotImplementedError",
                                      "Using quantized Marlin models requires a GPU with CUDA capability 8.0 or later.",
                                      exc="NotImplementedError"), "lib.arch_unsupported"),
    # CUDA toolkit, kernel image, driver, device
    ("flashinfer", row("flashinfer/compilation_context.py:83", "raise RuntimeError", "SM 12.x requires CUDA >= 12.9",
                       exc="RuntimeError"), "cuda.toolkit_too_old_for_arch"),
    ("triton", row("python/triton/backends/nvidia/compiler.py:300", "raise RuntimeError",
                   "ptxas fatal   : Value 'sm_{*}' is not defined for option 'gpu-name'", exc="RuntimeError"),
     "cuda.toolkit_too_old_for_arch"),
    ("pytorch", row("torch/cuda/__init__.py:230", "warnings.warn",
                    "{*} with CUDA capability sm_{*} is not compatible with the current PyTorch installation.\nThe "
                    "current PyTorch install supports CUDA capabilities {*}.", level="hint"), "cuda.no_kernel_image"),
    ("flashinfer", row("csrc/nv_internal/tensorrt_llm/kernels/cutlass_kernels/moe_gemm/moe_gemm_template_dispatch_tma_ws.h:139",
                       "TLLM_THROW", "Please recompile with support for hopper by passing 90-real as an arch to "
                       "build_wheel.py."), "cuda.no_kernel_image"),
    ("pytorch", row("torch/cuda/__init__.py:300", "raise AssertionError",
                    "The NVIDIA driver on your system is too old (found version {*}). Please update your GPU driver by "
                    "downloading and installing a new version from the URL: http://www.nvidia.com/Download/index.aspx",
                    exc="AssertionError"), "cuda.driver_too_old"),
    ("pytorch", row("torch/cuda/__init__.py:310", "raise RuntimeError", "No CUDA GPUs are available",
                    exc="RuntimeError"), "cuda.no_device"),
    ("pytorch", row("torch/cuda/__init__.py:280", "raise AssertionError", "Torch not compiled with CUDA enabled",
                    exc="AssertionError"), "cuda.no_device"),
    ("k8s_device_plugin", row("internal/rm/nvml_manager.go:40", "klog.Warning",
                              "If this is a GPU node, did you configure the NVIDIA Container Toolkit?", level="hint"),
     "cuda.no_device"),
    # kernel faults, hardware, native
    ("pytorch", row("c10/cuda/CUDAException.cpp:40", "TORCH_CHECK",
                    "CUDA error: an illegal memory access was encountered", exc="c10::AcceleratorError"),
     "cuda.illegal_memory_access"),
    ("pytorch", row("aten/src/ATen/native/cuda/IndexKernel.cu:90", "CUDA_KERNEL_ASSERT",
                    "device-side assert triggered"), "cuda.illegal_memory_access"),
    ("k8s_device_plugin", row("internal/rm/health.go:200", "klog.Errorf",
                              "XidCriticalError: Xid={*}, the device will go unhealthy."), "gpu.hardware_fault"),
    ("jax", row("jaxlib/gpu/gpu_kernel_helpers.cc:50", "absl::InternalError", "GPU has fallen off the bus",
                exc="Internal"), "gpu.hardware_fault"),
    ("vllm", row("vllm/platforms/cuda.py:40", "logger.warning",
                 "Failed to import from vllm._C: {*} undefined symbol: {*}", level="hint"),
     "native.undefined_symbol"),
    ("bitsandbytes", row("bitsandbytes/cextension.py:300", "raise RuntimeError",
                         "Could not load bitsandbytes native library: {*}", exc="RuntimeError"),
     "native.lib_not_found"),
    ("onnxruntime", row("onnxruntime/core/platform/posix/env.cc:600", "ORT_MAKE_STATUS",
                        "{*}: cannot open shared object file: No such file or directory"), "native.lib_not_found"),
    ("llama_cpp", row("ggml/src/ggml.c:200", "GGML_ASSERT", "GGML_ASSERT({*}) failed"), "native.crash"),
    ("jax", row("jaxlib/py_client.cc:391", "CHECK_LT", "Check failed: device_ordinal < addressable_devices.size()"),
     "native.crash"),
    ("ray", row("src/ray/core_worker/core_worker.cc:100", "RAY_LOG(FATAL)",
                "Segmentation fault in worker {*}, see the core dump"), "native.crash"),
    # builds
    ("pytorch", row("torch/utils/cpp_extension.py:2100", "raise RuntimeError", "Ninja is required to load C++ extensions",
                    exc="RuntimeError"), "jit.build_failed"),
    ("pytorch", row("torch/utils/cpp_extension.py:2400", "raise OSError",
                    "CUDA_HOME environment variable is not set. Please set it to your CUDA install root.",
                    exc="OSError"), "jit.build_failed"),
    ("triton", row("python/triton/compiler/code_generator.py:1300", "raise CompilationError",
                   "at {*}:{*}: {*}", exc="CompilationError"), "jit.build_failed"),
    # collectives
    ("pytorch", row("torch/csrc/distributed/c10d/NCCLUtils.hpp:60", "TORCH_CHECK_WITH",
                    "NCCL error in: {*}, unhandled system error (run with NCCL_DEBUG=INFO for details), NCCL version {*}",
                    exc="c10::DistBackendError"), "nccl.failure"),
    ("pytorch", row("torch/csrc/distributed/c10d/ProcessGroupNCCL.cpp:600", "LOG(ERROR)",
                    "{*} Watchdog caught collective operation timeout: WorkNCCL(SeqNum={*}, OpType={*}) ran for {*} "
                    "milliseconds before timing out."), "nccl.failure"),
    ("pytorch", row("third_party/gloo/gloo/transport/tcp/pair.cc:500", "GLOO_ENFORCE",
                    "Timed out waiting {*}ms for recv operation to complete"), "nccl.failure"),
    ("pytorch", row("torch/distributed/elastic/rendezvous/dynamic_rendezvous.py:1100", "raise RendezvousTimeoutError",
                    "The node '{*}' has not joined the rendezvous '{*}' in time", exc="RendezvousTimeoutError"),
     "nccl.failure"),
    ("xla", row("xla/service/rendezvous.cc:100", "LOG(ERROR)",
                "Termination timeout of {*} seconds exceeded. Exiting to ensure a consistent program state. Expected "
                "{*} threads to join the rendezvous, but not all of them arrived on time."), "nccl.failure"),
    # host
    ("pytorch", row("caffe2/serialize/inline_container.cc:500", "CAFFE_THROW",
                    "PytorchStreamWriter failed writing file {*}: file write failed"), "host.disk_full"),
    ("transformers", row("src/transformers/utils/hub.py:400", "warnings.warn",
                         "Not enough free disk space to download the file. The expected file size is: {*} MB. The "
                         "target location {*} only has {*} MB free disk space.", level="hint"), "host.disk_full"),
    ("megatron", row("megatron/training/checkpointing.py:300", "raise OSError", "[Errno 122] Disk quota exceeded: '{*}'",
                     exc="OSError"), "host.disk_full"),
    ("pytorch", row("torch/utils/data/_utils/signal_handling.py:60", "raise RuntimeError",
                    "ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared "
                    "memory (shm).", exc="RuntimeError"), "host.shm_exhausted"),
    ("pytorch", row("aten/src/ATen/MapAllocator.cpp:300", "TORCH_CHECK",
                    "unable to write to file </torch_{*}>: No space left on device ({*})", exc="c10::Error"),
     "host.shm_exhausted"),
    ("pytorch", row("torch/csrc/distributed/c10d/TCPStore.cpp:300", "C10_THROW_ERROR",
                    "The server socket has failed to listen on any local network address. port: {*}, useIpv6: {*}",
                    exc="c10::DistNetworkError"), "nccl.failure"),
    ("accelerate", row("src/accelerate/utils/launch.py:244", "raise ConnectionError",
                       "Tried to launch distributed communication on port `{*}`, but another process is utilizing it. "
                       "Please specify a different port (such as using the `--main_process_port` flag or specifying a "
                       "different `main_process_port` in your config file) and rerun your script.",
                       exc="ConnectionError"), "net.port_in_use"),
    ("sglang", row("python/sglang/srt/utils.py:700", "raise OSError", "[Errno 98] Address already in use",
                   exc="OSError"), "net.port_in_use"),
    ("transformers", row("src/transformers/utils/hub.py:900", "raise OSError",
                         "[Errno 13] Permission denied: '{*}'", exc="OSError"), "host.permission"),
    ("pytorch", row("torch/_inductor/codecache.py:100", "raise KeyError", "getpwuid(): uid not found: {*}",
                    exc="KeyError"), "host.permission"),
    # models
    ("vllm", row("vllm/model_executor/models/registry.py:400", "raise ValueError",
                 "Model architectures {*} are not supported for now. Supported architectures: {*}", exc="ValueError"),
     "engine.model_unsupported"),
    ("transformers", row("src/transformers/models/auto/configuration_auto.py:1000", "raise ValueError",
                         "The checkpoint you are trying to load has model type `{*}` but Transformers does not recognize "
                         "this architecture.", exc="ValueError"), "engine.model_unsupported"),
    ("llama_cpp", row("src/llama-model.cpp:384", "throw std::runtime_error", "unknown model architecture: '{*}'",
                      exc="std::runtime_error"), "engine.model_unsupported"),
    ("llama_cpp", row("src/llama-vocab.cpp:1596", "throw std::runtime_error", "unknown pre-tokenizer type: '{*}'",
                      exc="std::runtime_error"), "engine.model_unsupported"),
    ("ollama", row("llm/server.go:300", "fmt.Errorf",
                   "this model is not supported by your version of Ollama. You may need to upgrade"),
     "engine.model_unsupported"),
    ("pytorch", row("torch/nn/modules/module.py:2500", "raise RuntimeError",
                    "Error(s) in loading state_dict for {*}:\n\t{*}", exc="RuntimeError"), "model.load_failed"),
    ("pytorch", row("torch/nn/modules/module.py:2400", "error_msgs.append",
                    "size mismatch for {*}: copying a param with shape {*} from checkpoint, the shape in current model "
                    "is {*}."), "model.load_failed"),
    ("transformers", row("src/transformers/utils/hub.py:450", "raise EnvironmentError",
                         "{*} does not appear to have a file named {*}. Checkout 'https://huggingface.co/{*}/tree/{*}' "
                         "for available files.", exc="EnvironmentError"), "model.load_failed"),
    ("transformers", row("src/transformers/utils/hub.py:420", "raise EnvironmentError",
                         "You are trying to access a gated repo.\nMake sure to have access to it at {*}.",
                         exc="EnvironmentError"), "model.load_failed"),
    ("llama_cpp", row("src/llama-model-loader.h:42", "throw std::runtime_error",
                      "tensor '{*}' data is not within the file bounds, model is corrupted or incomplete",
                      exc="std::runtime_error"), "model.load_failed"),
    # kept unclassified: the program's own message says more than an id would
    ("pytorch", row("aten/src/ATen/native/TensorCompare.cpp:100", "TORCH_CHECK",
                    "Expected all tensors to be on the same device, but found at least two devices, {*} and {*}!",
                    exc="c10::Error"), "unclassified"),
    ("pytorch", row("aten/src/ATen/native/LinearAlgebra.cpp:200", "TORCH_CHECK",
                    "mat1 and mat2 shapes cannot be multiplied ({*}x{*} and {*}x{*})", exc="c10::Error"),
     "unclassified"),
    ("pytorch", row("aten/src/ATen/native/TensorShape.cpp:1000", "TORCH_CHECK",
                    "shape '{*}' is invalid for input of size {*}", exc="c10::Error"), "unclassified"),
    ("pytorch", row("aten/src/ATen/native/Linear.cpp:80", "TORCH_CHECK",
                    "expected scalar type Half but found Float", exc="c10::Error"), "unclassified"),
    ("pytorch", row("aten/src/ATen/core/dispatch/OperatorEntry.cpp:500", "TORCH_CHECK_NOT_IMPLEMENTED",
                    "Could not run '{*}' with arguments from the '{*}' backend.", exc="c10::NotImplementedError"),
     "unclassified"),
    ("pytorch", row("torch/nn/functional.py:2200", "raise IndexError", "index {*} is out of bounds for dimension {*} "
                    "with size {*}", exc="IndexError"), "unclassified"),
    ("pytorch", row("aten/src/ATen/native/Embedding.cpp:50", "TORCH_CHECK", "Index out of range in self",
                    exc="c10::IndexError"), "unclassified"),
    ("vllm", row("vllm/entrypoints/llm.py:300", "raise TypeError", "{*}() got an unexpected keyword argument '{*}'",
                 exc="TypeError"), "unclassified"),
    ("transformers", row("src/transformers/modeling_utils.py:100", "raise AttributeError",
                         "'{*}' object has no attribute '{*}'", exc="AttributeError"), "unclassified"),
    ("transformers", row("src/transformers/models/llama/configuration_llama.py:180", "raise ValueError",
                         "`rope_scaling` must be a dictionary with two fields, `type` and `factor`, got {*}",
                         exc="ValueError"), "unclassified"),
    ("flashinfer", row("flashinfer/attention/prims_ts/kernels/mla_decode/throughput_2cta/config.py:358",
                       "raise ValueError", "{*} must be positive, got {*}", exc="ValueError"), "unclassified"),
    ("flashinfer", row("csrc/attention.cpp:17", "TORCH_CHECK_VALUE", "num_splits must be positive, got",
                       exc="c10::ValueError"), "unclassified"),
    ("triton", row("python/triton/runtime/jit.py:500", "raise RuntimeError",
                   "out of resource: shared memory, Required: {*}, Hardware limit: {*}. Reducing block sizes or "
                   "`num_stages` may help.", exc="RuntimeError"), "unclassified"),
    ("jax", row("jax/experimental/mosaic/gpu/dialect_lowering.py:1841", "raise ValueError", "Ran out of shared memory.",
                exc="ValueError"), "unclassified"),
    ("llama_cpp", row("ggml/src/ggml-cuda/ggml-cuda.cu:120", "GGML_LOG_WARN",
                      "{*}: failed to allocate {*} MiB of pinned memory: {*}", level="hint"), "unclassified"),
    ("ollama", row("discover/runner.go:584", "slog.Warn", "llama-server GPU discovery watchdog timed out",
                   level="hint"), "unclassified"),
    ("ollama", row("cmd/launch/registry.go:557", "fmt.Errorf", "{*} is not installed"), "unclassified"),
    ("flashinfer", row("flashinfer/comm/pcie_ipc_ar.py:365", "raise RuntimeError",
                       "this workspace is already bound to {*}, but all_reduce was called on {*}.", exc="RuntimeError"),
     "unclassified"),
    ("ray", row("python/ray/autoscaler/_private/gcp/node.py:300", "raise RuntimeError",
                "Quota exceeded for quota metric 'NVIDIA_A100_GPUS' in region {*}", exc="RuntimeError"),
     "unclassified"),
    ("megatron", row("megatron/core/hyper_comm_grid.py:245", "logger.warning",
                     "Process group {*} has already been created. Because there is no way to check whether options "
                     "to create process group matches the first, we error out.", level="hint"), "unclassified"),
    ("minja_users", row("common/minja/minja.hpp:2532", "throw std::runtime_error", "Unknown argument {*} for function",
                        exc="std::runtime_error"), "unclassified"),
    ("ci_scripts", row("ci/torch_latest.py:174", "raise ValueError", "test selection is not readable UTF-8",
                       exc="ValueError"), "unclassified"),
    # libraries loaded by hand (CTranslate2's stubs), symbols missing from them
    ("ctranslate2", row("src/cuda/nccl_stub.cc:37", "throw std::runtime_error",
                        "Library {*} is not found or cannot be loaded", exc="std::runtime_error",
                        template='"Library " + std::string(NCCL_LIBNAME) + " is not found or cannot be loaded"'),
     "native.lib_not_found"),
    ("ctranslate2", row("src/cuda/cublas_stub.cc:30", "throw std::runtime_error",
                        "Cannot load symbol {*} from library", exc="std::runtime_error"), "native.undefined_symbol"),
    # a package said to be missing, with the version to install: missing, not a version conflict
    ("tensorrt_llm", row("tensorrt_llm/profiler.py:44", "logger.warning",
                         "A required package 'pynvml' is not installed. Will not monitor the device memory usages. "
                         "Please install the package first, e.g, 'pip install pynvml>=11.5.0'.", level="hint"),
     "python.module_missing"),
    # a version requirement whose specifier is a placeholder
    ("lmdeploy", row("lmdeploy/pytorch/check_env/transformers.py:18", "logger.warning",
                     "LMDeploy requires transformers{*}, but found transformers=={*}.", level="hint"),
     "python.version_conflict"),
    # register allocation is not device memory; advice that names OOM is not an OOM
    ("xla", row("xla/stream_executor/cuda/cuda_executor.cc:231", "absl::ResourceExhaustedError",
                "[{*}] Failed to load PTX text as a module (register allocation failed): {*}", exc="ResourceExhausted"),
     "unclassified"),
    ("ray", row("python/ray/data/dataset.py:701", "raise ValueError",
                "You must provide `batch_size` to `map_batches` when requesting GPUs. The optimal batch size depends "
                "on the model, data, and GPU used. We recommend using the largest batch size that doesn't result in "
                "your GPU device running out of memory.", exc="ValueError"), "unclassified"),
    # the CUDA toolkit's device linker and libdevice, which XLA's GPU compiler needs at run time
    ("xla", row("xla/service/gpu/llvm_gpu_backend/nvptx_backend.cc:113", "absl::NotFoundError",
                "libdevice is required by this HLO module but was not found at {*}", exc="NotFound"),
     "jit.build_failed"),
    ("xla", row("xla/stream_executor/cuda/subprocess_compilation.cc:548", "absl::InternalError",
                "nvlink exited with non-zero error code {*}, output: {*}", exc="Internal"), "jit.build_failed"),
    # an architecture gate written as a CUDA arch number
    ("ctranslate2", row("src/ops/awq/gemm.cc:17", "throw std::runtime_error",
                        "AWQ Gemm does not support for cuda arch < 7.5", exc="std::runtime_error"),
     "lib.arch_unsupported"),
    # an op builder that cannot build its extension, and a toolkit other than torch's
    ("deepspeed", row("op_builder/builder.py:568", "raise RuntimeError",
                      "Unable to JIT load the {*} op due to it not being compatible due to hardware/software issue."),
     "jit.build_failed"),
    ("apex", row("setup.py:40", "raise RuntimeError",
                 "Cuda extensions are being compiled with a version of Cuda that does not match the version used to "
                 "compile Pytorch binaries. Pytorch binaries were compiled with Cuda {*}."), "jit.build_failed"),
]

# One row for each entry of exceptions.tsv (by its reason's first words): the entry must still
# change the decision the rules would make for it.
EXCEPTION_SAMPLES = {
    "flash-attention's ROCm build": ("flash_attention", row(
        "setup.py:480", "raise RuntimeError",
        "GPU_ARCHS not set and no GPU detected. Please set GPU_ARCHS (e.g. GPU_ARCHS='gfx942') to cross-compile.",
        exc="RuntimeError"), "jit.build_failed"),
    "ProcessGroupCollection's own API checks": ("megatron", row(
        "megatron/core/process_groups_config.py:430", "raise ValueError",
        "dp process group is required but not provided in pg_collection", exc="ValueError"), "unclassified"),
    "Megatron's notice that it moved": ("megatron", row(
        "megatron/core/inference/engines/dynamic_engine.py:790", "logger.warning",
        "Requested InferenceCoordinator port {*} but got port {*} instead. This happens if the request port is "
        "already in use.", level="hint"), "unclassified"),
    "ExLlamaV2Config reads a model's config.json": ("exllamav2", row(
        "exllamav2/config.py:367", "assert", "'factor' missing from 'rope_scaling' config"), "unclassified"),
    "Ray's memory monitor refuses a platform": ("ray", row(
        "src/ray/common/memory_monitor.cc:100", "RAY_CHECK",
        "Check failed: false Memory monitor currently supports only linux"), "unclassified"),
    "NCCL falls back to its point-to-point network": ("nccl", row(
        "src/transport.cc:464", "WARN", "Cannot initialize CollNet, using point-to-point network instead"),
        "unclassified"),
    "NCCL ignores a setting it cannot use": ("nccl", row(
        "src/transport/shm.cc:298", "WARN",
        "Ignoring SHM locality, must be 1 (sender side) or 2 (receiver side, default)"), "unclassified"),
}


def taxonomy():
    return classify.taxonomy_ids(ROOT)


class ClassifyCasesTest(unittest.TestCase):
    def test_enough_cases(self):
        self.assertGreaterEqual(len(CASES), 60)
        self.assertGreaterEqual(sum(1 for c in CASES if c[2] == "unclassified"), 15)

    def test_each_case_gets_its_id(self):
        for project, r, want in CASES:
            with self.subTest(origin=r["origin"], form=r["forms"][0][:60]):
                got, why = classify.classify(r, project)
                self.assertEqual(got, want, "why: " + why)

    def test_expected_ids_are_taxonomy_ids(self):
        ids = taxonomy()
        for _, _, want in CASES:
            self.assertIn(want, ids)

    def test_why_names_the_rule(self):
        cause, why = classify.classify(CASES[0][1], CASES[0][0])
        self.assertEqual(why, "class: OutOfMemoryError of a device allocator")
        _, why = classify.classify(row("vllm/config.py:700", "raise ValueError", "Unknown quantization method: {*}",
                                       exc="ValueError"), "vllm")
        self.assertTrue(why.startswith("words: "), why)
        _, why = classify.classify(row("deepspeed/runtime/config.py:100", "raise ValueError",
                                       "offload_param must be one of {*}", exc="ValueError"), "deepspeed")
        self.assertEqual(why, "path+words: refusal in a configuration or argument file")

    def test_empty_row_is_default(self):
        self.assertEqual(classify.classify({}, ""), ("unclassified", "default"))
        self.assertEqual(classify.classify({"origin": "a.py:1", "forms": ["all is well"]}, "x"),
                         ("unclassified", "default"))

    def test_hint_is_classified_like_an_error(self):
        r = row("vllm/config.py:700", "logger.warning", "Unknown quantization method: {*}", level="hint")
        self.assertEqual(classify.classify(r, "vllm")[0], "config.invalid")

    def test_template_used_when_no_forms(self):
        r = row("pkg/x.py:1", "raise RuntimeError", [], template='"No space left on device"')
        r["forms"] = []
        self.assertEqual(classify.classify(r, "x")[0], "host.disk_full")

    def test_key_must_be_near_the_refusal(self):
        near = row("pkg/run.py:1", "raise ValueError", "--max-tokens must be positive")
        far = row("pkg/run.py:2", "raise ValueError",
                  "the value must be positive; this message is long enough that the unrelated mention of "
                  "--max-tokens comes far later")
        self.assertEqual(classify.classify(near, "x")[0], "config.invalid")
        self.assertEqual(classify.classify(far, "x")[0], "unclassified")

    def test_key_named_in_the_template(self):
        r = row("pkg/run.py:1", "raise ValueError", "{*} must be between 0 and 1, got {*}",
                template='f"{VLLM_GPU_MEMORY_FRACTION} must be between 0 and 1, got {value}"')
        self.assertEqual(classify.classify(r, "x")[0], "config.invalid")

    def test_constants_are_not_environment_variables(self):
        r = row("csrc/gemm.cu:10", "TORCH_CHECK", "NCCL_FLOAT16 must be supported by the reduction")
        self.assertEqual(classify.classify(r, "x")[0], "unclassified")

    def test_combination_refusal_only_for_engines(self):
        r = row("pkg/serve.py:10", "raise ValueError", "Prefix caching is only supported with flashinfer")
        self.assertEqual(classify.classify(r, "text_generation_inference")[0], "config.invalid")
        self.assertEqual(classify.classify(r, "some_kernel_library")[0], "unclassified")

    def test_nccl_warn_is_an_nccl_failure(self):
        # NCCL's WARN is its error report: what no other rule decides is nccl.failure ...
        r = row("src/graph/search.cc:229", "WARN", "Could not find gpu rank")
        self.assertEqual(classify.classify(r, "nccl"), ("nccl.failure", "project+site+level: NCCL's WARN: its error report"))
        # ... the words of the other rules and the guards decide first ...
        shm = row("src/os/linux.cc:842", "WARN", "Error while {*} shared memory segment {*} (size {*}), error: {*} ({*})")
        self.assertEqual(classify.classify(shm, "nccl")[0], "host.shm_exhausted")
        guard = row("src/enqueue.cc:1179", "WARN", "ncclProxyConnect: peerIndex {*} out of bounds [0, {*})")
        self.assertEqual(classify.classify(guard, "nccl")[0], "unclassified")
        # ... and it holds for NCCL's WARN only: not another site of NCCL, a hint, or another project.
        self.assertEqual(classify.classify(row("src/x.cc:1", "fprintf(stderr)", "Could not find gpu rank"), "nccl")[0],
                         "unclassified")
        self.assertEqual(classify.classify(dict(r, level="hint"), "nccl")[0], "unclassified")
        self.assertEqual(classify.classify(r, "llama_cpp")[0], "unclassified")

    def test_ray_check_op_condition_names_no_setting(self):
        # RAY_CHECK_EQ prints "RAY_PREDICT_TRUE(_left_ == _right_)": not a RAY_* environment variable.
        r = row("src/ray/raylet/main.cc:235", "RAY_CHECK_NE",
                "Check failed: RAY_PREDICT_TRUE(_left_ != _right_) {*} vs {*}Expected node ID.")
        self.assertEqual(classify.classify(r, "ray")[0], "unclassified")

    def test_ray_out_of_memory_is_the_host_not_the_device(self):
        r = row("python/ray/exceptions.py:10", "raise OutOfMemoryError", "{*}", exc="OutOfMemoryError")
        self.assertEqual(classify.classify(r, "ray")[0], "host.oom_killed")
        self.assertEqual(classify.classify(r, "pytorch")[0], "cuda.oom")


class ShippedTablesTest(unittest.TestCase):
    def test_tables_agree_with_the_procedure(self):
        # A change to RULES or exceptions.tsv is carried into rules/sites by reclassify.py.
        import reclassify
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            changed = sum(reclassify.reclassify(p, False) for p in sorted(
                __import__("glob").glob(os.path.join(ROOT, "rules", "sites", "*.tsv"))))
        self.assertEqual(changed, 0, "run scripts/vocab/reclassify.py rules/sites --write:\n" + out.getvalue()[:2000])


class RuleTableTest(unittest.TestCase):
    def test_rule_causes_are_taxonomy_ids(self):
        ids = taxonomy()
        for cause, name, _ in classify.RULES:
            self.assertIn(cause, ids, name)

    def test_rule_names_are_unique(self):
        names = [(c, n) for c, n, _ in classify.RULES]
        self.assertEqual(len(names), len(set(names)))

    def test_unknown_criterion_is_refused(self):
        with self.assertRaises(ValueError):
            classify._Rule("cuda.oom", "x", {"wrods": "oom"})

    def test_prefilter_does_not_change_decisions(self):
        rows = [(p, r) for p, r, _ in CASES] + [(p, r) for p, r, _ in EXCEPTION_SAMPLES.values()]
        with_anchors = [classify.classify(r, p) for p, r in rows]
        saved, saved_flag = classify.COMPILED, classify.USE_ANCHORS
        try:
            classify.USE_ANCHORS = False
            classify.COMPILED = [classify._Rule(c, n, k) for c, n, k in classify.RULES]
            without = [classify.classify(r, p) for p, r in rows]
        finally:
            classify.COMPILED, classify.USE_ANCHORS = saved, saved_flag
        self.assertEqual(with_anchors, without)

    def test_anchors_of_a_pattern(self):
        self.assertEqual(classify._anchors(r"no module named|cannot import name"),
                         ("cannot import name", "no module named"))
        self.assertIsNone(classify._anchors(r"\w+ failed|.*x"))

    def test_fast_enough(self):
        rows = [(p, r) for p, r, _ in CASES]
        n = 40000
        start = time.process_time()
        for i in range(n):
            p, r = rows[i % len(rows)]
            classify.classify(r, p)
        self.assertLess(time.process_time() - start, 10.0)


class ExceptionListTest(unittest.TestCase):
    def test_loads_with_taxonomy_ids(self):
        entries = classify.load_exceptions(known=taxonomy())
        self.assertEqual(len(entries), len(classify.EXCEPTIONS))

    def test_each_entry_has_a_sample_and_changes_its_decision(self):
        for e in classify.EXCEPTIONS:
            key = next((k for k in EXCEPTION_SAMPLES if e.reason.startswith(k)), None)
            self.assertIsNotNone(key, "no sample row for the exception: " + e.reason)
            project, r, want = EXCEPTION_SAMPLES[key]
            cause, why = classify.classify(r, project)
            self.assertEqual((cause, why.split(":")[0]), (want, "exception"))
            saved = classify.EXCEPTIONS
            try:
                classify.EXCEPTIONS = []
                without = classify.classify(r, project)[0]
            finally:
                classify.EXCEPTIONS = saved
            self.assertNotEqual(without, want, "the exception no longer changes anything: " + e.reason)

    def test_malformed_line_is_refused(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "e.tsv")
            with open(p, "w") as f:
                f.write("vllm\tvllm/config.py\tconfig.invalid\n")
            with self.assertRaises(ValueError):
                classify.load_exceptions(p)
            with open(p, "w") as f:
                f.write("vllm\tvllm/config.py\tconfig.wrong\tbecause\n")
            with self.assertRaises(ValueError):
                classify.load_exceptions(p, known=taxonomy())

    def test_selectors(self):
        e = classify._Exception("vllm", "vllm/config.py", "config.invalid", "r")
        r = row("vllm/config.py:12", "raise ValueError", "x")
        self.assertTrue(e.matches(r, classify._Row(r, "vllm")))
        self.assertFalse(e.matches(r, classify._Row(r, "sglang")))
        e = classify._Exception("*", "vllm/config.py:13", "config.invalid", "r")
        self.assertFalse(e.matches(r, classify._Row(r, "vllm")))
        e = classify._Exception("*", "/^x$/", "config.invalid", "r")
        self.assertTrue(e.matches(r, classify._Row(r, "any")))


class RemediesTest(unittest.TestCase):
    def setUp(self):
        with open(os.path.join(ROOT, "rules", "sites", "remedies.toml"), "rb") as f:
            self.remedies = tomllib.load(f)["remedies"]

    def test_every_produced_id_has_a_remedy(self):
        for cause in classify.causes_produced():
            self.assertIn(cause, self.remedies)

    def test_remedies_name_taxonomy_ids_only(self):
        ids = taxonomy() - {"unclassified"}
        for cause, text in self.remedies.items():
            self.assertIn(cause, ids)
            self.assertGreater(len(text), 120, cause)


class CommandLineTest(unittest.TestCase):
    def test_summary(self):
        with tempfile.TemporaryDirectory() as d:
            p = os.path.join(d, "rows.jsonl")
            with open(p, "w") as f:
                for project, r, _ in CASES[:5]:
                    f.write(json.dumps(dict(r, project=project)) + "\n")
            out = subprocess.run([sys.executable, os.path.join(VOCAB, "classify.py"), p, "--summary"],
                                 capture_output=True, text=True)
            self.assertEqual(out.returncode, 0, out.stderr)
            self.assertIn("cuda.oom", out.stdout)


TABLE = "\n".join([
    "# project: demo",
    "# repo: example/demo",
    "# release: v1.2.3",
    "# commit: 0123456789abcdef0123456789abcdef01234567",
    "# extracted: 2026-12-07",
    "\t".join(["demo/config.py:10", "raise ValueError", "error", "config.invalid", "words: x",
               "Unknown quantization method:", '"t"']),
    "\t".join(["demo/config.py:10", "raise ValueError", "error", "config.invalid", "words: x",
               "Unknown method:", '"t"']),
    "\t".join(["demo/mem.py:5", "logger.warning", "hint", "cuda.oom", "words: y", "CUDA out of memory", '"t"']),
    "\t".join(["demo/x.py:7", "raise ValueError", "error", "unclassified", "default",
               "something else went wrong", '"a\\tb"']),   # an escaped tab in the template
]) + "\n"


class StatsTest(unittest.TestCase):
    def test_page_counts_rows_sites_and_ids(self):
        with tempfile.TemporaryDirectory() as d:
            os.makedirs(os.path.join(d, "sites"))
            with open(os.path.join(d, "sites", "demo.tsv"), "w") as f:
                f.write(TABLE)
            out = os.path.join(d, "page.md")
            with contextlib.redirect_stdout(io.StringIO()):
                stats.main(["--sites", os.path.join(d, "sites"), "--out", out])
            with open(out) as f:
                page = f.read()
        self.assertIn("example/demo", page)
        self.assertIn("v1.2.3", page)
        self.assertIn("0123456789ab", page)
        self.assertIn("| `demo` | 4 | 3 | 3 | 1 | 1 |", page)
        self.assertIn("| `config.invalid` | 2 | 1 | 0 | 1 |", page)

    def test_reads_tables(self):
        t = stats.read_table_text(TABLE)
        self.assertEqual(t["header"]["project"], "demo")
        self.assertEqual(len(t["rows"]), 4)
        self.assertEqual(t["rows"][3]["template"], '"a\tb"')


if __name__ == "__main__":
    unittest.main()
