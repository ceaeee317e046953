#!/usr/bin/env python3
"""Gives every error site of a project's source a taxonomy id (rules/taxonomy.toml) or
`unclassified`, by the written procedure below, never by hand per row.

    classify(row, project) -> (cause, why)

`row` is one row of scripts/vocab/extract.py ({"origin", "lang", "site", "level", "exc",
"template", "forms"}); `why` names the rule that decided, as "<criteria>: <rule name>", e.g.
"words: the driver is older than the CUDA runtime", "class: ModuleNotFoundError", "path+words:
refusal in a configuration or argument file", "exception: reviewed (...)" or "default".
scripts/vocab/CLASSIFICATION.md says the procedure in prose.

The procedure:
  1. the reviewed exception list scripts/vocab/exceptions.tsv, first;
  2. RULES, in order: the first rule whose every criterion holds decides (a rule may decide
     `unclassified`: the guards of section 5);
  3. otherwise `unclassified` ("default").

A rule's criteria (all optional; all that are given must hold):
  words     regex, or a tuple of regexes that must all match, searched case-insensitively in
            the message: the row's forms joined by newlines (the template when it has none)
  unless    regex that must not match the message (case-insensitively)
  exc       regex, full match against the exception class (its last . or :: component)
  site      regex, searched in the site kind ("raise ValueError", "TORCH_CHECK", "GGML_ABORT")
  level     "error" or "hint"
  lang      regex, full match against the language (python, cpp, go, rust)
  path      glob patterns (fnmatch, case-insensitive) for the source file of the origin; a
            pattern starting "*/" also matches at the top of the tree
  not_path  glob patterns the source file must not match
  project   regex searched (case-insensitively) in the project name
  key       True: the message names a setting (a --flag, an environment variable of a known
            family, a known engine setting) within 60 characters of where the first `words`
            regex matched; the template's text is tried the same way when the forms are not

Command line, for reviewing rows before a table is built:

    classify.py ROWS.jsonl [--project NAME] [--cause ID] [--why TEXT] [--summary]

reads rows (one JSON object per line; a "project" field takes precedence over --project) and
prints cause, why, origin and first form per row, tab-separated, or counts per cause and rule.
"""
import argparse
import collections
import csv
import fnmatch
import json
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
EXCEPTIONS_TSV = os.path.join(HERE, "exceptions.tsv")

# ------------------------------------------------------------------------------------------
# Shared fragments of the rules
# ------------------------------------------------------------------------------------------

# Files whose refusals are refusals of a setting: configuration classes, argument and option
# parsers, environment-variable readers, flag definitions.
CONFIG_PATHS = (
    "*/config.py", "*/config/*", "*/configs/*", "*_config.py", "*/config_*.py", "*/configuration.py",
    "*arg_utils*", "*server_args*", "*/args.py", "*/arguments.py", "*/arguments/*", "*_args.py",
    "*/cli_args*", "*envs.py", "*/env.py", "*/envconfig/*", "*/flags*", "*_flags.*", "*/arg.cpp",
    "*/arg.h", "*/utils/dataclasses.py", "*/options.py", "*/settings.py",
)
# Command-line front ends: a refusal there is a configuration refusal when it speaks of an
# option, a flag, an argument, a value or a configuration.
CLI_PATHS = ("*/cli/*", "*/cli.py", "*/cmd/*", "*/commands/*", "*/launcher/*", "*/entrypoints/cli/*")
# Configuration classes of model definitions (transformers' configuration_<model>.py) check a
# model's config.json, and tuning configurations of kernels check the kernel's own parameters:
# neither is the service's configuration.
NOT_SERVICE_CONFIG = (
    "*/configuration_*.py", "*/models/*/config*.py", "*/kernels/*", "*/kernel/*", "*/kernel_src/*",
    "*/csrc/*", "*.cu", "*.cuh",
)
DISTRIBUTED_PATHS = (
    "*/distributed/*", "*/comm/*", "*/comms/*", "*/collective*", "*parallel_state*", "*/nccl*",
    "*/gloo*", "*/rendezvous/*", "*/c10d/*", "*/device_communicators/*", "*/communication/*",
)
# Code that runs on or for a device: an allocation failure there is one of device memory.
DEVICE_PATHS = (
    "*cuda*", "*/gpu/*", "*_gpu*", "*/hip/*", "*_hip*", "*hip_*", "*.hip", "*rocm*", "*/tpu/*",
    "*vulkan*", "*metal*", "*sycl*", "*/stream_executor/*", "*/device*", "*/csrc/*", "*.cu", "*.cuh",
)
# Serving engines and launchers: their options come from a command line or a service's
# configuration, so a combination they refuse is a combination of settings.
ENGINE_PROJECTS = (
    r"vllm|sglang|text[-_]generation[-_]inference|(?:^|[^a-z])tgi(?:[^a-z]|$)|tensorrt[-_]?llm|trt[-_]?llm|"
    r"triton[-_]inference[-_]server|triton[-_]server|tritonserver|ollama|llama[-_.]?cpp|comfy"
)

# A setting named in a message.
ENV_NAME_RE = re.compile(
    r"\b(?:(?:VLLM|SGLANG|SGL|TORCH|PYTORCH|NCCL|HF|HUGGING_FACE|TRANSFORMERS|FLASHINFER|TRITON|XLA|JAX|TF|"
    r"OLLAMA|LLAMA_ARG|ACCELERATE|DS|DEEPSPEED|RAY|TRTLLM|TLLM|NVIDIA|MEGATRON|NVTE|COMFY|BNB|"
    r"BITSANDBYTES|XFORMERS|TGI|PJRT|TPU|UCX|GLOO|NVSHMEM)_[A-Z0-9_]*[A-Z0-9]|"
    r"CUDA_VISIBLE_DEVICES|CUDA_LAUNCH_BLOCKING|CUDA_MODULE_LOADING|CUDA_DEVICE_ORDER|CUDA_HOME|"
    r"MASTER_ADDR|MASTER_PORT|WORLD_SIZE|LOCAL_RANK|LOCAL_WORLD_SIZE|OMP_NUM_THREADS|MAX_JOBS|"
    r"HIP_VISIBLE_DEVICES|ROCR_VISIBLE_DEVICES)\b")
# Constants that look like environment variables but are not.
NOT_ENV_RE = re.compile(r"_(?:CHECK|ASSERT|ERROR|STATUS|SUCCESS|WARN|VERSION_CODE)\w*$|^TORCH_(?:CHECK|INTERNAL)|"
                        r"^NCCL_(?:FLOAT|INT|UINT|BFLOAT|HALF|DOUBLE|SUM|PROD|MAX|MIN|AVG)\w*$|"
                        r"^RAY_PREDICT_(?:TRUE|FALSE)$")
KNOWN_SETTINGS = (
    r"tensor[_-]parallel[_-]size|pipeline[_-]parallel[_-]size|data[_-]parallel[_-]size|"
    r"expert[_-]parallel[_-]size|max[_-]model[_-]len|max[_-]num[_-]seqs|max[_-]num[_-]batched[_-]tokens|"
    r"gpu[_-]memory[_-]utilization|mem[_-]fraction[_-]static|kv[_-]cache[_-]dtype|swap[_-]space|"
    r"load[_-]format|tokenizer[_-]mode|distributed[_-]executor[_-]backend|attention[_-]backend|"
    r"num[_-]speculative[_-]tokens|speculative[_-](?:config|model)|enable[_-]prefix[_-]caching|"
    r"enable[_-]chunked[_-]prefill|chunked[_-]prefill[_-]size|enforce[_-]eager|cpu[_-]offload[_-]gb|"
    r"max[_-]lora[_-]rank|max[_-]loras|served[_-]model[_-]name|trust[_-]remote[_-]code|"
    r"max[_-]total[_-]tokens|max[_-]input[_-]tokens|max[_-]batch[_-]prefill[_-]tokens|"
    r"max[_-]batch[_-]total[_-]tokens|\bnum[_-]shard\b|n[_-]gpu[_-]layers|\bnum[_-]ctx\b|"
    r"train[_-]batch[_-]size|train[_-]micro[_-]batch[_-]size[_-]per[_-]gpu|gradient[_-]accumulation[_-]steps|"
    r"zero[_-]optimization|\bmixed[_-]precision\b|mig[_-]strategy|device[_-]list[_-]strategy|"
    r"nproc[_-]per[_-]node|\bnnodes\b|rdzv[_-](?:backend|endpoint|id|conf)|max[_-]restarts|"
    r"config(?:uration)? (?:key|option|field)"
)
KEY_RE = re.compile(
    r"(?<![\w-])--[a-z][\w-]+|\benv(?:ironment)?[ _-]?var(?:iable)?s?\b|" + KNOWN_SETTINGS)
KEY_DISTANCE = 60
USE_ANCHORS = True          # the literal prefilter of each words regex (see _anchors)

# Words of a refusal.
REFUSAL = (
    r"\bmust\b|\bshould\b|\binvalid\b|not (?:a )?valid|\bunknown\b|unrecogni[sz]ed|unsupported|"
    r"not supported|\bcannot\b|can't|can not|\bonly (?:supports?|supported|allowed|valid|accepts?)|"
    r"not allowed|\bexpected\b|\brequires?\b|\brequired\b|conflict|mutually exclusive|incompatible|"
    r"not compatible|not permitted|\bexceeds?\b|out of range|greater than|less than|larger than|"
    r"smaller than|divisible|at least|at most|one of|please (?:set|specify|provide|use|choose)|"
    r"is not set|\bnot set\b|\bmissing\b|must not|\bnot both\b|\bdisallowed\b"
)
NOT_A_REFUSAL = r"deprecat|will be (?:removed|ignored)|not (?:yet )?implemented|no longer (?:used|needed)"
OPTION_WORDS = r"--|\bflags?\b|\boptions?\b|\barguments?\b|\bparameters?\b|\bsettings?\b|\bconfig|\bvalue\b|\benv"

# Packages whose version a message may require (optionally quoted, with a suffix such as
# "-cu12" or "-cubin").
PACKAGES = (
    r"torch|pytorch|torchvision|torchaudio|transformers|numpy|jax|jaxlib|triton|flashinfer|vllm|sglang|"
    r"accelerate|deepspeed|bitsandbytes|xformers|flash[-_ ]?attn|flash[-_ ]attention|peft|safetensors|"
    r"tokenizers|huggingface[-_]hub|protobuf|pydantic|python|onnx|onnxruntime|tensorrt|tensorrt[-_]llm|"
    r"ray|megatron[-_]core|apex|transformer[-_ ]engine|cupy|scipy|diffusers|datasets|sentencepiece|"
    r"tiktoken|xgrammar|outlines|mistral[-_]common|compressed[-_]tensors|llguidance|gguf|ninja|"
    r"setuptools|ml[-_]dtypes|libtpu|optimum|auto[-_]gptq|autoawq|gptqmodel|torchao|deep[-_]gemm|"
    r"cudnn|nccl|nvidia-[a-z][\w-]*|cuda-python|pynvml|nvidia-ml-py|timm|einops|cutlass|"
    r"mamba[-_]ssm|causal[-_]conv1d|kernels"
)
PKG = r"[`'\"]?(?:" + PACKAGES + r")(?:[-_.][a-z][\w.-]*)?[`'\"]?"

# ------------------------------------------------------------------------------------------
# The procedure: first match wins. Each entry: (cause, rule name, criteria).
# ------------------------------------------------------------------------------------------

RULES = [
    # --- 1. Exception classes that mean one thing wherever they are raised -----------------
    ("python.module_missing", "ModuleNotFoundError", dict(exc=r"ModuleNotFoundError|TritonMissing")),
    ("host.oom_killed", "Ray's OutOfMemoryError (its memory monitor kills the worker)",
     dict(exc=r"OutOfMemoryError", project=r"^(?:.*/)?ray$")),
    ("cuda.oom", "OutOfMemoryError of a device allocator",
     dict(exc=r"(?:Cuda)?OutOfMemoryError|CudaOOMError")),
    ("host.permission", "PermissionError", dict(exc=r"PermissionError")),
    ("nccl.failure", "torch.distributed and NCCL communication errors",
     dict(exc=r"Dist(?:Backend|Network|Store)?Error|Rendezvous(?:Timeout|Connection)Error|Nccl(?:Error|Exception)|NCCLError")),
    ("jit.build_failed", "compiler and JIT build errors",
     dict(exc=r"BackendCompilerFailed|InductorError|CppCompileError|CUDACompileError|InvalidCxxCompiler|"
              r"CppWrapperCodegenError|LoweringException|MissingOperatorWith(?:out)?Decomp|CompilationError|"
              r"CompileTimeAssertionFailure|UnsupportedLanguageConstruct|PTXASError|NVRTCError|"
              r"CompileException|NVCCException|HIPCCException|JitifyException")),
    ("lib.arch_unsupported", "GPUTooOldForTriton", dict(exc=r"GPUTooOldForTriton")),
    ("lib.arch_unsupported", "OutOfResources (a kernel's configuration needs more shared memory or "
     "registers than this GPU has)", dict(exc=r"OutOfResources")),
    ("config.invalid", "InvalidBackend (a backend setting the compiler refuses)",
     dict(exc=r"InvalidBackend")),
    ("config.invalid", "argparse ArgumentError / ArgumentTypeError", dict(exc=r"Argument(?:Type)?Error")),
    ("model.load_failed", "Hub and checkpoint reader errors",
     dict(exc=r"GatedRepoError|RepositoryNotFoundError|RevisionNotFoundError|EntryNotFoundError|"
              r"LocalEntryNotFoundError|SafetensorError|UnpicklingError|HFValidationError")),

    # --- 2. Words that mean one thing --------------------------------------------------------
    ("gpu.hardware_fault", "Xid / fallen off the bus / ECC / lost GPU",
     dict(words=r"\bXid\b|fallen off the bus|uncorrectable ECC|\bECC errors?\b|double[- ]bit ECC|"
                r"GPU (?:is|has been|was) lost|\blost (?:the )?GPU\b|ECC_UNCORRECTABLE|ECCUncorrectable|"
                r"GPU_IS_LOST|row remap(?:ping|per) failure|GPU requires reset|GPU reset required|"
                r"NVLink (?:error|failure|link down)")),
    ("cuda.illegal_memory_access", "kernel fault (illegal address, device-side assert, launch failure)",
     dict(words=r"illegal memory access|an illegal (?:instruction|address) was encountered|misaligned address|"
                r"device[- ]side assert|unspecified launch failure|CUDA_ERROR_ILLEGAL_ADDRESS|"
                r"cudaErrorIllegalAddress|cudaErrorLaunchFailure|CUDA_ERROR_LAUNCH_FAILED|"
                r"hipErrorIllegalAddress|memory access fault by GPU|warp (?:illegal|out[- ]of[- ]range) address")),
    ("cuda.no_kernel_image", "no kernel image or binary for the device's architecture",
     dict(words=r"no kernel image is available|not compatible with the current PyTorch installation|"
                r"NO_BINARY_FOR_GPU|NoKernelImageForDevice|no binary for (?:the )?GPU|invalid device function|"
                r"(?:was not|wasn't|not) (?:compiled|built) (?:for|with support for) (?:this|your|the current) "
                r"(?:GPU|device|architecture)|not (?:compiled|built) (?:for|with) (?:sm_?\d+|compute_\d+)|"
                r"recompile with support for (?:hopper|blackwell|ampere|ada|sm_?\d+)|"
                r"no longer supports this GPU|current PyTorch install(?:ation)? supports CUDA capabilit")),
    ("cuda.toolkit_too_old_for_arch", "the CUDA toolkit cannot target the architecture",
     dict(words=r"Unsupported gpu architecture|No supported CUDA architectures found|"
                r"\bSM ?\d+(?:\.x)? requires CUDA|"
                r"(?:sm_?\d+\w*|compute capability \d+(?:\.\d+)?|compute_\d+\w*) (?:requires|needs) "
                r"(?:CUDA|nvcc|the CUDA toolkit|a CUDA toolkit)\b|"
                r"is not defined for option 'gpu-name'|Value 'sm_\w+' is not defined|"
                r"(?:CUDA|nvcc|toolkit|NVRTC) (?:version )?(?:\{\*\} )?(?:is )?too old (?:for|to (?:support|target|compile for)) "
                r"(?:sm|arch|this GPU|the GPU|compute)")),
    ("cuda.driver_too_old", "the driver is older than the CUDA runtime",
     dict(words=r"driver version is insufficient|(?:NVIDIA |GPU |CUDA |AMD |display )?driver (?:on your system )?is too old|"
                r"\bdriver too old\b|COMPAT_NOT_SUPPORTED_ON_DEVICE|forward compatibility was attempted|"
                r"cudaErrorInsufficientDriver|CUDA_ERROR_SYSTEM_DRIVER_MISMATCH|SystemDriverMismatch|"
                r"unsupported display driver / cuda driver combination|"
                r"(?:update|upgrade) (?:your |the )?(?:NVIDIA |GPU |CUDA |graphics )drivers?\b|"
                r"(?:requires|needs) (?:an? )?(?:newer |more recent )?(?:NVIDIA |CUDA |GPU )?driver (?:version )?"
                r"(?:>=|of at least|\d|\{\*\})|minimum (?:required )?(?:NVIDIA |CUDA )?driver version|"
                r"Driver/library version mismatch",
          unless=r"\bray driver|driver (?:process|node|script|program)")),
    ("cuda.no_device", "no GPU visible or usable",
     dict(words=r"No CUDA GPUs are available|no CUDA-capable device|CUDA_ERROR_NO_DEVICE|cudaErrorNoDevice|"
                r"invalid device ordinal|all CUDA-capable devices are busy|Found no NVIDIA driver|"
                r"not compiled with CUDA|compiled without CUDA support|"
                r"\b(?:CUDA|GPUs?|NVIDIA GPUs?|GPU devices?|CUDA devices?) (?:is|are) not available|"
                r"\bno (?:NVIDIA |CUDA |available |visible |usable |supported )?(?:GPUs?|GPU devices?|CUDA devices?|"
                r"CUDA-capable devices?)(?: were| was| are| is| have been)? (?:found|detected|available|visible)|"
                r"could not find any (?:NVIDIA |CUDA )?(?:GPUs?|GPU devices?|CUDA devices?)|"
                r"(?:GPU|CUDA) device count is (?:0|zero)|"
                r"did you (?:configure|set up|install) the NVIDIA Container Toolkit|cuda\.is_available\(\) is False|"
                r"(?:fewer|less) (?:GPUs|CUDA devices) than|not enough (?:GPUs|CUDA devices)\b|"
                r"number of (?:available |visible )?(?:GPUs|CUDA devices) \(?\{?\*?\}?\)? ?(?:is )?(?:less|smaller|fewer) than|"
                r"deserialize object on .{0,20}device .{0,20}but torch\..{0,10}device_count\(\) is|"
                r"deserialize object on .{0,20}device but torch\..{0,10}is_available\(\) is False")),
    ("native.undefined_symbol", "undefined symbol / symbol lookup error",
     dict(words=r"undefined symbol|symbol lookup error|version [`'](?:GLIBC|GLIBCXX|CXXABI)_[\d.]+[`'] not found|"
                r"procedure entry point .{0,80} could not be located|"
                r"(?:cannot|could not|couldn't|unable to|failed to) (?:load|find|resolve) symbol \S+ (?:from|in) (?:the )?(?:shared )?library")),
    ("native.lib_not_found", "a shared library cannot be loaded",
     dict(words=r"cannot open shared object file|error while loading shared libraries|"
                r"(?:could not|couldn't|unable to|failed to|cannot|can't|can not) (?:load|open|find|locate|dlopen) "
                r"(?:the )?(?:[\w.+-]+ )?(?:shared |dynamic |native |CUDA )?(?:library|object file)\b|"
                r"\blib[\w+-]*\.(?:so|dylib)(?:\.[\d.]+)?\b.{0,40}(?:not found|cannot|could not|couldn't|failed|unable|no such file)|"
                r"(?:not found|cannot|could not|couldn't|failed|unable) (?:to )?(?:load|open|find)\b.{0,40}\blib[\w+-]*\.(?:so|dylib)\b|"
                r"\.dll\b.{0,40}(?:not found|could not|failed)|\bdlopen\b.{0,60}(?:fail|error)|"
                r"LoadLibrary(?:Ex)?\w* failed|Could not load dynamic library|DLL load failed|"
                r"specified module could not be found|no such (?:shared )?library|library not loaded|"
                r"\blibrary \S+ (?:is )?not found or cannot be loaded")),
    ("cuda.oom", "CUDA out of memory / an allocation on the device failed",
     dict(words=r"CUDA out of memory|OUT_OF_MEMORY|cudaErrorMemoryAllocation|CUBLAS_STATUS_ALLOC_FAILED|"
                r"CUDNN_STATUS_ALLOC_FAILED|hipErrorOutOfMemory|"
                r"out of (?:device|GPU|HBM|VRAM|video|accelerator) memory|"
                r"\b(?:GPU|device|VRAM) memory (?:is )?(?:exhausted|full)|"
                r"Tried to allocate .{0,40}(?:GiB|MiB|KiB|bytes)|\bcudaMalloc\w* failed|"
                r"failed to allocate (?:the )?(?:CUDA|GPU|device|VRAM|Metal|Vulkan) (?:buffer|memory)|"
                r"OOM when allocating|RESOURCE_EXHAUSTED:? Out of memory|"
                r"out of memory (?:on|in) (?:device|GPU|the GPU|CUDA)|does not fit (?:in|into)? ?any GPU",
          unless=r"out of memory \(host\)|host memory|pinned memory|\bCPU memory")),
    ("cuda.oom", "the KV cache or the memory fraction does not fit the device",
     dict(words=r"maximum number of tokens that can be stored in KV cache|No available memory for the cache blocks|"
                r"not enough (?:GPU |device )?memory (?:for|to (?:hold|store|allocate|fit)) (?:the )?(?:KV|cache|kv[_ ]cache)|"
                r"(?:insufficient|not enough) (?:GPU |device )?memory for (?:the )?KV cache|"
                r"KV cache (?:is )?(?:too small|does not fit|cannot fit)|"
                r"Not enough memory\. Please try to increase --mem-fraction-static|"
                r"not enough memory to handle .{0,40}tokens|"
                r"(?:Free|available) (?:GPU )?memory on device .{0,60}(?:is )?less than desired GPU memory utilization|"
                r"(?:try|please) (?:increasing|to increase|increase|raise|raising) .{0,30}"
                r"(?:gpu[_-]memory[_-]utilization|mem[_-]fraction[_-]static)|"
                r"(?:decreas|lower|reduc)\w* .{0,30}(?:gpu[_-]memory[_-]utilization|mem[_-]fraction[_-]static)",
          unless=r"must be (?:between|in|a|one of|greater|less|positive|<|>)")),
    ("host.disk_full", "no space left on device / disk full",
     dict(words=r"No space left on device|\bENOSPC\b|Errno 28\b|disk (?:is )?full|database or disk is full|"
                r"(?:not enough|insufficient|no|out of|low|ran out of|running out of|lack of) (?:free )?"
                r"(?:disk|storage|drive)(?: space)?\b|(?:disk|storage) space (?:is )?(?:low|insufficient|exhausted|full|not enough)|"
                r"Disk quota exceeded|\bEDQUOT\b|ephemeral[- ]storage|PytorchStreamWriter failed writing file",
          unless=r"shared memory|/dev/shm|</torch_")),
    ("host.disk_full", "quota exceeded (of a filesystem)",
     dict(words=r"quota exceeded",
          unless=r"\bapi\b|\brate\b|request|gpu|cpu|resource|token|instance|compute|memory|credit|usage limit|metric")),
    ("host.shm_exhausted", "/dev/shm or a shared-memory segment is too small",
     dict(words=(r"/dev/shm|\bshm\b|shm_open|shm[-_]size|shared memory segment|"
                 r"(?:posix|system|ipc|host|inter-process) shared memory|shared memory \((?:shm|/dev/shm)\)|"
                 r"workers are out of shared memory|DataLoader worker .{0,40}Bus error|</torch_|shared memory object",
                 r"fail|error|unable|cannot|could not|couldn't|not enough|insufficient|too small|exhaust|no space|"
                 r"bus error|increase|--shm-size|\bfull\b|out of"),
          unless=r"hardware limit|per (?:thread)?block|\bsmem\b|out of resource|Required: |threadblock|"
                 r"\bkernel\b|\bsm_\d|launch")),
    ("net.port_in_use", "address already in use",
     dict(words=r"Address already in use|\bEADDRINUSE\b|address in use|"
                r"\bport\b.{0,50}(?:is )?(?:already )?in use\b|\bport\b.{0,50}(?:is )?(?:not available|already (?:bound|taken|occupied))|"
                r"\bport\b.{0,60}another process is (?:using|utili[sz]ing|listening)|"
                r"(?:failed|unable) to listen on .{0,80}\bport\b")),
    ("net.port_in_use", "could not bind an address or a port",
     dict(words=(r"(?:failed|unable|could not|couldn't|cannot|can't) (?:to )?bind\b|\bbind(?:\(\))? (?:failed|error)",
                 r"\bport\b|address|socket|\btcp\b|\budp\b|listen|\bhost\b|server|\bzmq\b|endpoint|\{\*\}:\{\*\}|:\d{2,5}\b"),
          unless=r"argument|parameter|texture|buffer|sampler|descriptor|uniform|keyword")),
    ("host.permission", "permission denied / operation not permitted / no user entry",
     dict(words=r"Permission denied|\bEACCES\b|\bEPERM\b|Operation not permitted|getpwuid|uid not found|"
                r"insufficient permissions?|(?:do not|don't|does not|doesn't) have (?:the )?(?:write |read |required |"
                r"sufficient )?permissions?|\bno (?:write |read )?permissions? (?:to|for|on)\b|"
                r"(?:is|are) not (?:readable|writable|writeable)\b(?! utf)|read-only file ?system|\bEROFS\b|"
                r"requires root (?:privileges|access)|must be run as root",
          unless=r"gated|repo(?:sitory)?\b|huggingface|access token|\bHF_TOKEN\b")),
    ("host.oom_killed", "killed for host memory",
     dict(words=r"OOM[- ]?kill|\boom_kill|OOMKilled|Out of memory: Killed process|killed by (?:the )?(?:OOM|out[- ]of[- ]memory|kernel)|"
                r"memory monitor|killed due to (?:memory|OOM)|(?:node|host|system) (?:is )?running low on memory|"
                r"exit(?:ed)? (?:with )?(?:code|status):? 137\b|memory limit exceeded.{0,40}kill|"
                r"(?:ran|running) out of (?:host |system |node )?memory.{0,40}(?:kill|terminat)")),
    ("nccl.failure", "an NCCL, gloo, MPI or collective failure",
     dict(words=r"\bNCCL\b.{0,40}\b(?:error|failure|failed|timed? ?out|timeout|aborted|WARN)\b|"
                r"nccl(?:System|Internal|UnhandledCuda|Remote|InvalidUsage|InvalidArgument)Error|"
                r"unhandled (?:system|cuda) error|\bgloo\b.{0,60}\b(?:error|failed|failure|timed? ?out|timeout|"
                r"connection|closed|reset)\b|"
                r"\b(?:MPI|UCC|UCX|HCCL|RCCL|oneCCL|XCCL|MSCCL)\b.{0,40}\b(?:error|failed|failure|timed? ?out|timeout|aborted)\b|"
                r"collective (?:operation |communication )?(?:timed? ?out|timeout|mismatch|failed|failure|desync)|"
                r"Watchdog caught|(?:NCCL|ProcessGroup\w*|c10d) watchdog|Detected mismatch between collectives|"
                r"(?:ProcessGroup\w*|process group)\b.{0,30}\b(?:timed? ?out|timeout|aborted|failed|failure)\b|"
                r"rendezvous.{0,60}\b(?:timed? ?out|timeout|failed|failure|closed|connect\w*)\b|"
                r"\b(?:timed? ?out|timeout)\b.{0,120}\brendezvous|"
                r"(?:TCPStore|FileStore|HashStore|c10d store|c10d::\w*Store).{0,60}\b(?:timed? ?out|timeout|failed|connect\w*)\b|"
                r"(?:all[_ -]?reduce|all[_ -]?gather|reduce[_ -]?scatter|all[_ -]?to[_ -]?all|\bbarrier\b|broadcast collective|"
                r"send/recv|p2p (?:communication|send|recv)).{0,60}\b(?:timed? ?out|timeout|failed|hang|hung|mismatch)\b|"
                r"(?:peer access|p2p access|GPU P2P|CUDA IPC|IPC handle|IPC memory).{0,40}\b(?:not supported|failed|"
                r"unavailable|cannot|disabled|lacks)\b|"
                r"lacks GPU P2P|waiting for (?:all )?(?:participants|peers|other ranks|the other ranks|all ranks)|"
                r"\bibv_\w+ failed|NET/IB|\bRDMA\b.{0,40}\b(?:error|failed|failure)\b|DistBackendError|DistNetworkError|"
                r"DistStoreError|connection (?:closed|reset) by (?:remote )?peer.{0,80}\b(?:rank|nccl|gloo|collective)",
          unless=r"must be|should be|is not supported (?:with|for|when|on)|not implemented|already been created")),
    ("model.load_failed", "the checkpoint does not match the model (missing keys, size mismatch)",
     dict(words=r"size mismatch for .{0,80}(?:copying a param|checkpoint|state_dict|weight|param)|"
                r"Missing key\(?s?\)? in state_dict|Unexpected key\(?s?\)? in state_dict|"
                r"Error\(s\) in loading state_dict|copying a param with shape|"
                r"\b(?:missing|unexpected) keys? (?:in|from) (?:the )?(?:checkpoint|state[_ ]dict|weights)|"
                r"(?:tensor|weight|parameter)s? .{0,60}(?:not found in|missing from|missing in|is missing from) (?:the )?"
                r"(?:checkpoint|state[_ ]dict|model file|safetensors|gguf|weights)|"
                r"wrong number of tensors|data is not within the file bounds")),
    ("model.load_failed", "model, weights or tokenizer files cannot be found, read or downloaded",
     dict(words=r"does not appear to have a file named|not a valid model identifier|gated repo|Repository Not Found|"
                r"\b40[13] Client Error|Weights only load failed|PytorchStreamReader failed|failed finding central directory|"
                r"invalid load key|SafetensorError|HeaderTooLarge|MetadataIncompleteBuffer|Error while deserializing header|"
                r"\binvalid (?:gguf |ggml )?magic\b|not a (?:valid )?(?:gguf|safetensors|checkpoint|model) file|"
                r"(?:Can't|Cannot|Could not|Couldn't|Unable to|Failed to|Error) (?:load|loading|open|opening|read|reading|find|"
                r"locate|download|downloading|deserialize) (?:the )?(?:pretrained |model'?s? )?(?:model|weights|weight file|"
                r"checkpoint|tokenizer|config\.json|safetensors?|state[_ ]dict|gguf|model (?:file|weights|path)|"
                r"vocab(?:ulary)?(?: file)?|adapter|lora (?:weights|adapter|model))\b|"
                r"\b(?:model|weights?|checkpoint|tokenizer|safetensors|gguf|config\.json) (?:file|files|path|directory|folder|shard)s? "
                r"(?:\{\*\} |'\{\*\}' |\"\{\*\}\" )?(?:was |were |is |are )?(?:not found|does not exist|do not exist|missing|"
                r"corrupt(?:ed)?|truncated|incomplete)|"
                r"\berror loading model\b|\bfailed to load model\b|\bmodel (?:path|file|directory) .{0,40}(?:not found|does not exist)|"
                r"access to model .{0,40}is restricted|Unrecognized model in .{0,120}Should have a `?model_type`? key",
          unless=r"out of memory|\bOOM\b|recommendation")),
    ("engine.model_unsupported", "a model architecture, type or format this version does not know",
     dict(words=r"Model architectures? .{0,120}(?:are|is) not supported|does not recognize this architecture|"
                r"unknown model architecture|(?:unsupported|unknown|unrecognized) (?:model (?:architecture|type|arch)|model_type)\b|"
                r"\bmodel[ _]type .{0,60}(?:is )?not (?:yet )?supported|not supported by your version of|"
                r"(?:unknown|unsupported) (?:pre-?tokenizer|tokenizer|vocab(?:ulary)?)(?: type)?:? ['\"{]|"
                r"(?:unknown|unsupported) (?:pre-?tokenizer|tokenizer|vocab(?:ulary)?) type|Unrecognized configuration class|"
                r"(?:architecture|model) \{\*\} is not (?:yet )?supported (?:by|in) (?:vLLM|SGLang|this version|llama\.cpp|TGI|"
                r"TensorRT-LLM|ollama|transformers)|"
                r"(?:is|are) not supported for AutoModel\b|Unsupported model IR version|\bopset .{0,30}(?:is )?not supported|unsupported (?:GGUF|gguf) (?:version|file)|"
                r"invalid ggml type|unknown (?:gguf|ggml) type|has model type .{0,40} but Transformers does not recognize",
          unless=r"\bGPU\b|\bCUDA\b|\bsm_|compute capability|\bCPU\b")),
    ("python.module_missing", "No module named", dict(words=r"No module named")),
    ("python.symbol_missing", "cannot import name / module has no attribute",
     dict(words=r"cannot import name|\bmodule\b.{0,80} has no attribute")),
    ("python.version_conflict", "built against another version of a dependency",
     dict(words=r"compiled (?:using|with|against) NumPy|cannot be run in NumPy|"
                r"(?:compiled|built) (?:with|against|for) (?:a )?different (?:CUDA|torch|PyTorch|NumPy|python) versions?|"
                r"compiled with different CUDA versions|"
                r"(?:was|were|is) (?:compiled|built) (?:with|against|for):? (?:torch|PyTorch|NumPy|jaxlib|CUDA) \{?\*?\}?[\d.]* ?(?:but|while|and|with)|"
                r"version incompatibility|Mismatched NCCL version|PyTorch version mismatch")),
    ("jit.build_failed", "CUDA_HOME, nvcc, ninja or the host compiler missing or failing",
     dict(words=r"CUDA_HOME (?:environment variable )?(?:is not set|not set|must be set|is not found|does not exist)|"
                r"\bnvcc\b.{0,30}(?:not found|was not found|cannot be found|missing|failed|returned non-zero)|"
                r"(?:could not|cannot|unable to|failed to) (?:find|locate) (?:nvcc|the CUDA compiler|a CUDA installation|CUDA_HOME)|"
                r"Error building extension|Ninja is required|\bninja\b.{0,40}(?:failed|not found|not available|required|error)|"
                r"\bptxas\b.{0,40}(?:error|fatal|failed)|NVRTC_ERROR|\bnvrtc\b.{0,40}(?:error|failed)|"
                r"\bnvlink exited with|\blibdevice\b.{0,60}not found|"
                r"(?:gcc|g\+\+|clang\+?\+?|host compiler|C\+\+ compiler|C compiler|cc1plus|MSVC|cl\.exe)\b.{0,40}"
                r"(?:not found|failed|unsupported|not supported|returned non-zero|is required|missing)|"
                r"unsupported GNU version|fatal error: [\w/.-]+\.(?:h|hpp|cuh): No such file|Python\.h|"
                r"PassManager::run failed|\bcompilation (?:failed|error|terminated)|"
                r"(?:failed to|could not|unable to|cannot) (?:compile|JIT[- ]compile|build) (?:the )?(?:CUDA |C\+\+ |cpp |JIT |triton )?"
                r"(?:extension|kernel|module|source|plugin|op|ops|library|code)\b|"
                r"(?:extension|kernel|JIT|CUDA|C\+\+|cpp|triton|NVRTC) (?:compilation|build|compile) (?:failed|error)|"
                r"detected CUDA version .{0,80}mismatches the version that was used to compile|backend compiler failed|"
                r"extensions are being compiled with a version of Cuda that does not match|"
                r"Unable to JIT load the .{0,40} op\b",
          unless=r"engine|TensorRT|trtllm|\bplan\b")),
    ("config.invalid", "an option or argument parser refused the command line",
     dict(words=r"unrecogni[sz]ed (?:arguments?|options?|flags?|command[- ]line)|"
                r"\bunknown (?:command[- ]line )?(?:option|argument|flag|cli argument|subcommand)s?\b|"
                r"invalid choice|invalid value for (?:argument|option|flag|parameter|--|'--|\"--|`--|env|environment)|"
                r"unexpected argument|the following (?:required )?arguments (?:are|were) (?:required|not provided)|"
                r"required arguments? (?:were |was )?not provided|expected (?:one|\d+) arguments?\b|no such option|"
                r"missing (?:required )?option|flag provided but not defined|unknown command line flag|"
                r"(?:Illegal|invalid) value .{0,60}(?:specified )?for .{0,30}\bflag\b|ambiguous option|"
                r"(?:^|\n)argument --?[\w-]+(?:/--?[\w-]+)*: |invalid (?:argument|value) for (?:--|-)\w",
          unless=r"keyword argument|positional argument|\(\) got|\bkwargs?\b|state[_ ]dict|checkpoint|"
                 r"\bfunction\b|got unexpected")),
    ("config.invalid", "a setting's value is not one the program knows",
     dict(words=r"(?:unknown|unsupported|invalid|unrecogni[sz]ed) (?:quantization(?: method| scheme| config| type)?|"
                r"kv[_ -]cache[_ -]dtype|attention[_ ]backend|load[_ ]format|tokenizer[_ ]mode|"
                r"(?:distributed )?executor[_ ]backend|scheduling[_ ]policy|sampling[_ ]backend|guided[_ ]decoding[_ ]backend|"
                r"reasoning[_ ]parser|tool[_ ]call[_ ]parser|mig[- ]strategy|device[- ]list[- ]strategy|log[_ ]level|"
                r"pooling[_ ]type|config(?:uration)? (?:key|option|field|value|setting)|setting)s?\b|"
                r"(?:unknown|unrecogni[sz]ed) (?:[\w.-]+ ){1,2}(?:option|setting|config(?:uration)? key)\b|"
                r"unrecogni[sz]ed key .{0,40}\bin (?:the )?(?:[\w.-]+ ){0,3}config\b|"
                r"\b(?:unknown|invalid|unsupported) (?:distributed |c10d |process group )?backend(?: type| name)?\b|"
                r"Distributed package doesn't have \w+ built in|is not in the list of known (?:backends|platforms)|"
                r"No backend type associated with device type|Invalid (?:fraction|ratio|percentage) value|"
                r"\. Allowed range: |\bwas requested but .{0,40}\b(?:built|build|compiled) without\b",
          unless=r"no platforms|[Aa]vailable backends|[Pp]latforms present")),
    ("config.invalid", "a dtype the GPU lacks, chosen by the dtype setting",
     dict(words=r"(?:bfloat16|bf16|float8|fp8) is only supported on GPUs with compute capability of at least|"
                r"explicitly setting the `?dtype`? flag|Your setup doesn't support (?:bf16|fp16)|"
                r"compute type, but the target device or backend do not support efficient|\bInvalid compute type\b")),
    ("config.invalid", "a parallel size does not divide the model",
     dict(words=r"(?:must be|is not|should be) (?:evenly )?divisible by (?:the )?(?:tensor|pipeline|data|expert|context|sequence)"
                r"[ _-](?:model[ _-])?parallel|"
                r"(?:tensor|pipeline|data)[ _-]parallel[ _-]size .{0,60}(?:must be|should be|cannot be|exceeds|is larger than)|"
                r"Number of devices .{0,20} must be >= the product of mesh_shape",
          unless=r"\bshape|\btensor\b|dimension|\bdim\b")),
    ("config.invalid", "an environment variable's value is refused",
     dict(words=(r"\benv(?:ironment)?[ _-]?var(?:iable)?s?\b",
                 r"invalid|unknown|unrecogni[sz]ed|not a valid|must be|should be|expected|unsupported|"
                 r"cannot be parsed|failed to parse|could not parse|not recogni[sz]ed|one of"),
          unless=r"CUDA_HOME|\bnot set\b|is not set|please set")),

    # --- 3. Native crashes, by their words ---------------------------------------------------
    ("native.crash", "segfault, abort, uncaught C++ exception or heap corruption",
     dict(words=r"Segmentation fault|\bSIGSEGV\b|\bSIGABRT\b|\bSIGILL\b|double free|free\(\): invalid|"
                r"corrupted (?:size|double-linked)|terminate called|core dumped|Fatal Python error|"
                r"stack smashing|Process received signal|Illegal instruction|heap-buffer-overflow|"
                r"memory corruption detected")),

    # --- 4. A library's GPU-architecture gate, before the guards (NotImplementedError often
    #        carries one) ---------------------------------------------------------------------
    ("lib.arch_unsupported", "a library's GPU-architecture gate",
     dict(words=r"(?:requires?|needs?|only supports?|only supported on|only available on|only works on|supported only on|"
                r"is only supported on|are only supported on)\s+(?:an? )?(?:NVIDIA )?(?:GPUs? )?(?:with |of )?(?:a )?"
                r"(?:sm_?\d+|SM ?\d+|sm\d+|(?:CUDA |compute |device )capability|CC ?\d|Ampere|Hopper|Blackwell|"
                r"Ada(?: Lovelace)?|Turing|Volta|A100|H100|H200|H20\b|B200|GB200|newer GPU|(?:a )?more recent GPU)|"
                r"(?:compute|CUDA) capability .{0,60}(?:at least|>=|below|less than|lower than|minimum|not supported|unsupported|"
                r"required|too (?:low|old)|is not|isn't|insufficient|\bor (?:higher|above|newer|later))|"
                r"(?:minimum|required|min) (?:compute |device |GPU )?capability|"
                r"(?:GPU|device|hardware) (?:architecture|arch|generation) (?:is )?(?:not supported|unsupported|too old)|"
                r"(?:unsupported|not supported) (?:GPU|CUDA|device) (?:architecture|arch|capability|generation)|"
                r"(?:not supported|unsupported|not available|cannot run) on (?:this|your|the current|the) (?:GPU|GPU architecture|GPU arch)|"
                r"not supported on (?:sm_?\d+|compute capability|Volta|Turing|Pascal|Maxwell|Kepler|pre-Ampere|pre-Hopper|"
                r"GPUs? (?:older|below|before|with compute))|"
                r"\bsm_?\d+\w* (?:or (?:newer|higher|above|later)|\+|and (?:newer|above|later))|"
                r"Ampere (?:GPUs? )?or (?:newer|later)|Hopper (?:GPUs? )?or (?:newer|later)|"
                r"(?:GPU|device) (?:is )?too old|older GPUs? (?:is|are) not supported|"
                r"(?:for|on) (?:Volta|Turing|Pascal|Maxwell|Kepler)(?: (?:and|or) (?:Volta|Turing|Pascal|Maxwell|Kepler))? GPUs|"
                r"(?:not support(?:ed)?|unsupported|does not support|doesn't support)\b.{0,20}\b(?:CUDA|GPU|compute) "
                r"arch(?:itecture)?s? ?(?:<|<=|below|lower than|older than) ?\d",
          unless=r"requires? (?:CUDA|nvcc|the CUDA toolkit|a CUDA toolkit)\b|\bCUDA (?:>=|version)|"
                 r"(?:must|should) be (?:one of|between|in)\b")),

    # --- 5. Guards: kept unclassified, the program's own message says more ---------------------
    ("unclassified", "not implemented", dict(words=r"not (?:yet )?implemented|\bunimplemented\b")),
    ("unclassified", "NotImplementedError outside configuration files",
     dict(exc=r"NotImplementedError", not_path=CONFIG_PATHS)),
    ("unclassified", "shape, size or dimension mismatch",
     dict(words=r"\bshapes?\b|\bdims?\b|\bdimensions?\b|\bndim\b|\brank\b \d|broadcast|"
                r"size mismatch|sizes? (?:do not|don't|must) match|contiguous|\bstrides?\b|\bnumel\b",
          not_path=CONFIG_PATHS)),
    ("unclassified", "dtype or tensor type error",
     dict(words=r"\bdtypes?\b|scalar ?type|data ?type|\btensor type|\bfloat(?:16|32|64)?\b|\bhalf\b|\bint(?:8|32|64)\b",
          not_path=CONFIG_PATHS)),
    ("unclassified", "tensors on different devices",
     dict(words=r"same device|on (?:different|the wrong) devices?|expected .{0,40}device .{0,40}(?:got|but)")),
    ("unclassified", "index or value out of range",
     dict(words=r"out of (?:range|bounds)|index \{?\*?\}? ?is out|\bIndexError\b")),
    ("unclassified", "type error in calling code",
     dict(exc=r"TypeError|AttributeError|KeyError|IndexError|JaxprTypeError|ShardingTypeError|UnexpectedTracerError|"
              r"ConcretizationTypeError|TracerBoolConversionError|TracerArrayConversionError|TracerIntegerConversionError",
          not_path=CONFIG_PATHS)),

    # --- 6. Broader words, after the guards ------------------------------------------------------
    # An ImportError whose message names the install command ("... requires Accelerate: `pip install
    # 'accelerate>=0.26.0'`"): raised where the package is absent or older than the floor the
    # command names, and absent is what the reports show (transformers' is_*_available checks).
    ("python.module_missing", "an ImportError that gives the install command",
     dict(exc=r"^ImportError$", words=r"requires? (?:the )?[\w.-]+(?: library| package)?: ?`?pip install",
          unless=r"--upgrade|-U\b|\bupgrade")),
    ("python.version_conflict", "a package version requirement refused",
     dict(words=(r"version|requir|need|expect|minimum|at least|install|upgrade|update|downgrade|compatib|mismatch|"
                 r"conflict|\d\+",
                 r"(?:requires?|required|needs?|expects?|minimum|at least)\s+(?:to have |to use |having )?(?:version\s+)?" + PKG +
                 r"\s*(?:version\s*)?(?:>=|==|~=|<=|>|<|\s\d|\d[\d.]*\+|\{\*\} or (?:newer|higher|later|above))|"
                 r"\binstall\s+" + PKG + r"\s*(?:>=|==|~=|\s\d|\d[\d.]*\+)|"
                 r"(?:requires?|required|needs?)\s+\{\*\}\s*(?:>=|==|~=)|"
                 r"(?:requires?|needs?) version (?:>=\s*)?\d[\d.]*(?:\+| or (?:newer|higher|later))|"
                 r"" + PKG + r"\s*(?:version\s*)?(?:>=|==|~=)\s*\{?\*?\}?[\d.]*\s*(?:is )?(?:required|needed)|"
                 r"" + PKG + r"(?:'s)? version .{0,60}(?:is )?(?:too old|too new|not supported|unsupported|incompatible|"
                 r"older than|newer than|below|lower than|higher than|must be|should be|mismatch|does not match|doesn't match)|"
                 r"version of " + PKG + r" (?:that )?(?:is )?(?:too old|not supported|incompatible|not compatible)|"
                 r"(?:please |you need to |you must )?(?:upgrade|update|downgrade) (?:your )?" + PKG +
                 r"(?: to| version|\s*(?:>=|==|<)|\s*$|\.|,| or)|"
                 r"(?:incompatible|mismatch(?:ed|ing)?|conflicting) " + PKG + r" versions?|"
                 r"is only compatible with " + PKG + r"|jaxlib version|"
                 r"(?:not supported|not available|unavailable) (?:in|with) (?:your|this|the installed) version of " + PKG + r"|"
                 r"(?:requires?|required|needs?)\s+" + PKG + r"\s*\{\*\},? but (?:found|got|have|has|is)\b"),
          unless=r"\bdriver\b|gguf|ggml|file format|format version|protocol|schema|opset|\bIR version|serializ|"
                 r"\bplan\b|checkpoint version|\bmodel\b|\bparse\b|\bnot installed\b")),
    ("python.module_missing", "a package is not installed",
     dict(words=r"\bis not installed\b|are not installed|\bnot installed\b|(?:is|are) required but (?:not installed|not found|missing)|"
                r"requires? (?:the )?[\w.-]+ (?:package|library|module|extra)\b|"
                r"(?:please|you can|to|you need to|you must|must) install|\bpip install\b|"
                r"install(?:ed)? it (?:with|via|using)|could not (?:find|import) (?:the )?(?:module|package)|"
                r"\b(?:module|package) .{0,40}(?:not found|is missing)|not found in your environment|"
                r"you need to have .{0,40} installed|(?:package|module|library) (?:is )?(?:not available|unavailable)\b.{0,40}install|"
                r"\bis not available\. Please install|requires? [\w.`'-]+ to be installed|"
                r"(?:package|library|module) must be (?:installed|available)|(?:ensure|make sure) (?:that )?.{0,60}(?:is|are) installed",
          lang=r"python",
          unless=r"\bdriver\b|\bnvcc\b|toolkit|\bcompiler\b|CUDA_HOME|\bgcc\b|-U\b|--upgrade|upgrade")),
    ("cuda.oom", "out of memory in device code",
     dict(words=r"out of memory|\bOOM\b|failed to allocate|allocation failed|cannot allocate|insufficient memory|not enough memory",
          path=DEVICE_PATHS,
          unless=r"host memory|pinned|\bCPU\b|\bRAM\b|system memory|shared memory|out of range|\bregisters?\b|"
                 r"\bmust (?:provide|specify|pass)\b")),
    ("cuda.oom", "out of memory, naming the device",
     dict(words=(r"out of memory|\bOOM\b|insufficient memory|not enough memory|failed to allocate|allocation failed",
                 r"\bGPU\b|\bCUDA\b|\bdevice\b|\bVRAM\b|\bTPU\b|\bcuda:\d|\bhip\b|\bROCm\b|Metal|Vulkan"),
          unless=r"host memory|pinned|\bCPU\b|\bRAM\b|system memory|shared memory|out of range|\bHBM\b|"
                 r"\bregisters?\b|\bmust (?:provide|specify|pass)\b")),
    ("nccl.failure", "a communication failure in distributed code",
     dict(words=r"timed? ?out (?:waiting|connecting|after|while)|timeout (?:waiting|while|connecting|expired)|"
                r"connection (?:refused|reset|closed|lost|failed)|failed to connect|(?:host|peer|address|network) unreachable|"
                r"(?:socket|network) (?:error|timeout|failure)|peer (?:closed|disconnected|exited)",
          path=DISTRIBUTED_PATHS,
          unless=r"\bmust\b|\bshould\b|\binvalid\b|not supported|deprecat")),
    ("config.invalid", "refusal in a configuration or argument file",
     dict(words=REFUSAL, path=CONFIG_PATHS, not_path=NOT_SERVICE_CONFIG, unless=NOT_A_REFUSAL)),
    ("config.invalid", "refusal of an option in a command-line front end",
     dict(words=(REFUSAL, OPTION_WORDS), path=CLI_PATHS, not_path=NOT_SERVICE_CONFIG, unless=NOT_A_REFUSAL)),
    ("config.invalid", "refusal that names a setting",
     dict(words=REFUSAL, key=True, unless=NOT_A_REFUSAL + r"|\btensor\b|\bshape\b|\bdtype\b")),
    ("config.invalid", "an option's value refused with the values it may take",
     dict(words=(r"(?:should|must|has to) be one of\b|\bexpected one of\b|\bnot one of\b|"
                 r"\b(?:valid|supported|available|allowed|possible|accepted) (?:options|values|choices|modes)"
                 r"(?: are| is|:)|\bchoose (?:one )?from\b",
                 r"\b(?:options?|modes?|values?|backends?|choices?|settings?|arguments?|parameters?|flags?|"
                 r"strateg(?:y|ies)|polic(?:y|ies)|methods?|formats?|levels?)\b"),
          unless=NOT_A_REFUSAL + r"|using (?:the )?default|falling back|fall back|proceeding|\bignor|"
                 r"\btensors?\b|\bshapes?\b|\bdtypes?\b|\bdims?\b|\bdevices?\b|\bindex\b|"
                 r"\blayouts?\b|\btypes?\b|\brange\b|combination of arguments|\bstatic_arg")),
    ("config.invalid", "an engine refuses a combination of options",
     dict(words=r"(?:is|are) not supported (?:with|together with|in combination with|when)\b|"
                r"cannot be (?:used|combined|enabled|set) (?:together )?with|(?:is|are) mutually exclusive|"
                r"(?:is|are) only supported (?:with|when)\b|(?:is|are) not compatible with",
          project=ENGINE_PROJECTS, not_path=NOT_SERVICE_CONFIG,
          unless=r"\btensor\b|\bshape\b|\bdtype\b|\bGPU\b|\bdevice\b|\bplatform\b|\bCPU\b|\bhardware\b|\bsm_|"
                 r"compute capability|\bROCm\b|\bTPU\b|\bXPU\b|\bMPS\b|\bstream(?:ing)?\b")),

    # --- 7. Native aborts, by the kind of site ------------------------------------------------
    ("native.crash", "an abort site (LOG(FATAL), GGML_ABORT, GGML_ASSERT, CHECK, abort())",
     dict(site=r"^(?:LOG\((?:FATAL|QFATAL|DFATAL)\)|PLOG\(FATAL\)|ABSL_LOG\(FATAL\)|LOG_FATAL|GGML_ABORT|GGML_ASSERT|"
               r"(?:ABSL_)?(?:Q|D|P)?CHECK(?:_\w+)?|TF_CHECK_OK|XLA_CHECK\w*|abort|std::abort|std::terminate|__builtin_trap)\b",
          lang=r"cpp|c|cuda")),

    # --- 8. A project's own error report, by project and site -----------------------------------
    # NCCL has no ERROR level: its WARN(...) ("NCCL WARN ...") is what its failures print, and the
    # ncclResult_t it returns with it fails the collective or the communicator. What the rules
    # above did not decide (the guards' unclassified included) is an NCCL failure. WARNs that
    # NCCL prints in runs that go on are reviewed exceptions (exceptions.tsv).
    ("nccl.failure", "NCCL's WARN: its error report",
     dict(project=r"^nccl$", site=r"^WARN$", level="error")),
]

# ------------------------------------------------------------------------------------------
# Compiled form
# ------------------------------------------------------------------------------------------

_CRITERIA = {"words", "unless", "exc", "site", "level", "lang", "path", "not_path", "project", "key"}


def _folded(pattern):
    """Compiles a pattern for matching against lower-cased text. Lower-casing the pattern
    (escapes such as \\S or \\W kept as written) is much faster than re.IGNORECASE."""
    out, i = [], 0
    while i < len(pattern):
        if pattern[i] == "\\":
            out.append(pattern[i:i + 2])
            i += 2
        else:
            out.append(pattern[i].lower())
            i += 1
    return re.compile("".join(out))


def _anchors(folded_pattern):
    """Literal strings one of which any text the pattern matches must contain, read from the
    parsed pattern (a necessary condition, tested with `in` before the regex runs: most rows
    fail most rules, and a substring test is much cheaper than a search); None when the
    pattern has no such strings."""
    try:
        from re import _constants as sc, _parser as sp
    except ImportError:                            # Python before 3.11
        import sre_constants as sc
        import sre_parse as sp
    repeats = {sc.MAX_REPEAT, sc.MIN_REPEAT} | ({sc.POSSESSIVE_REPEAT} if hasattr(sc, "POSSESSIVE_REPEAT") else set())

    def of_sequence(items):
        found, run = [], []
        for op, av in list(items) + [(None, None)]:
            if op is sc.LITERAL:
                run.append(chr(av))
                continue
            if run:
                found.append({"".join(run)})
                run = []
            if op is sc.SUBPATTERN:
                sub = of_sequence(av[-1])
            elif op is sc.BRANCH:
                sub = set()
                for branch in av[1]:
                    b = of_sequence(branch)
                    if not b:
                        sub = None
                        break
                    sub |= b
            elif op in repeats and av[0] >= 1:
                sub = of_sequence(av[2])
            else:
                sub = None
            if sub:
                found.append(sub)
        found = [f for f in found if min(map(len, f)) >= 2]
        if not found:
            return None
        return max(found, key=lambda f: (min(map(len, f)), -len(f)))

    try:
        best = of_sequence(sp.parse(folded_pattern))
    except Exception:                              # an unusual construct: no prefilter
        return None
    return tuple(sorted(best)) if best else None


def _glob_re(patterns):
    parts = []
    for p in patterns:
        rx = fnmatch.translate(p)
        if p.startswith("*/"):                    # also at the top of the tree
            rx = "(?:" + rx + "|" + fnmatch.translate(p[2:]) + ")"
        parts.append(rx)
    return re.compile("|".join(parts), re.I)


_PATH_CACHE = {}


def _path_in(globs, path):
    """Whether path matches a compiled glob set; cached, as one file holds many sites."""
    k = (globs.pattern, path)
    hit = _PATH_CACHE.get(k)
    if hit is None:
        if len(_PATH_CACHE) > 200000:
            _PATH_CACHE.clear()
        hit = _PATH_CACHE[k] = bool(globs.match(path))
    return hit


_KEY_FOLDED = _folded(KEY_RE.pattern)


def _key_spans(folded, original):
    spans = [m.span() for m in _KEY_FOLDED.finditer(folded)]
    if len(folded) == len(original):          # offsets agree (lower() kept the length)
        spans += [m.span() for m in ENV_NAME_RE.finditer(original) if not NOT_ENV_RE.search(m.group(0))]
    return spans


def _near(regex, folded, original):
    """Whether a match of regex lies within KEY_DISTANCE characters of a named setting."""
    keys = _key_spans(folded, original)
    if not keys:
        return False
    for m in regex.finditer(folded):
        s, e = m.span()
        for a, b in keys:
            if s - b <= KEY_DISTANCE and a - e <= KEY_DISTANCE:
                return True
    return False


class _Rule:
    __slots__ = ("cause", "name", "why", "words", "anchors", "unless", "exc", "site", "level", "lang", "path",
                 "not_path", "project", "key")

    def __init__(self, cause, name, crit):
        unknown = set(crit) - _CRITERIA
        if unknown:
            raise ValueError("rule %r: unknown criteria %s" % (name, sorted(unknown)))
        self.cause, self.name = cause, name
        w = crit.get("words")
        self.words = tuple(_folded(x) for x in ((w,) if isinstance(w, str) else (w or ())))
        self.anchors = tuple(_anchors(x.pattern) if USE_ANCHORS else None for x in self.words)
        self.unless = _folded(crit["unless"]) if crit.get("unless") else None
        self.exc = re.compile(crit["exc"]) if crit.get("exc") else None
        self.site = re.compile(crit["site"]) if crit.get("site") else None
        self.level = crit.get("level")
        self.lang = re.compile(crit["lang"]) if crit.get("lang") else None
        self.path = _glob_re(crit["path"]) if crit.get("path") else None
        self.not_path = _glob_re(crit["not_path"]) if crit.get("not_path") else None
        self.project = re.compile(crit["project"], re.I) if crit.get("project") else None
        self.key = bool(crit.get("key"))
        if self.key and not self.words:
            raise ValueError("rule %r: key needs words" % name)
        # The criteria that name the rule in `why`; lang, not_path and unless only narrow it.
        kinds = [k for k, v in (("project", self.project), ("path", self.path), ("class", self.exc),
                                ("site", self.site), ("level", self.level), ("words", self.words),
                                ("key", self.key)) if v]
        self.why = "%s: %s" % ("+".join(kinds), name)

    def matches(self, row):
        if self.project and not self.project.search(row.project):
            return False
        if self.level and row.level != self.level:
            return False
        if self.lang and not self.lang.fullmatch(row.lang):
            return False
        if self.exc and not self.exc.fullmatch(row.exc):
            return False
        if self.site and not self.site.search(row.site):
            return False
        if self.path and not _path_in(self.path, row.path):
            return False
        if self.not_path and _path_in(self.not_path, row.path):
            return False
        for i, w in enumerate(self.words):
            a = self.anchors[i]
            if a is not None and not any(x in row.folded for x in a):
                if not self.key or i > 0:
                    return False
                # a key rule's first words may match in the template instead
            elif not (self.key and i == 0) and not w.search(row.folded):
                return False
        if self.unless and self.unless.search(row.folded):
            return False
        if self.key:
            w = self.words[0]
            if not (_near(w, row.folded, row.text) or
                    (row.template and _near(w, row.template.lower(), row.template))):
                return False
        return True


class _Row:
    """The parts of an extracted row that the rules look at."""
    __slots__ = ("project", "path", "lang", "site", "level", "exc", "text", "folded", "template")

    def __init__(self, row, project):
        self.project = project or ""
        origin = row.get("origin", "") or ""
        path, _, line = origin.rpartition(":")
        self.path = path if line.isdigit() else origin
        self.lang = row.get("lang", "") or ""
        self.site = row.get("site", "") or ""
        self.level = row.get("level", "error") or "error"
        exc = row.get("exc", "") or ""
        self.exc = exc.rsplit(".", 1)[-1].rsplit("::", 1)[-1]
        forms = [f for f in (row.get("forms") or []) if f]
        self.template = row.get("template", "") or ""
        self.text = "\n".join(forms) if forms else self.template
        self.folded = self.text.lower()


COMPILED = [_Rule(c, n, crit) for c, n, crit in RULES]

# ------------------------------------------------------------------------------------------
# The reviewed exception list
# ------------------------------------------------------------------------------------------


class _Exception:
    __slots__ = ("project", "origin", "message", "cause", "reason")

    def __init__(self, project, selector, cause, reason):
        self.project = project
        self.cause, self.reason = cause, reason
        self.origin = self.message = None
        if len(selector) > 1 and selector.startswith("/") and selector.endswith("/"):
            self.message = re.compile(selector[1:-1], re.I)
        elif ":" in selector.rsplit("/", 1)[-1]:          # file:line, globs allowed
            self.origin = re.compile(fnmatch.translate(selector))
        else:                                             # a file: every site in it
            self.origin = re.compile(fnmatch.translate(selector + ":*"))

    def matches(self, row_dict, row):
        if self.project != "*" and self.project.lower() != row.project.lower():
            return False
        if self.message is not None:
            return bool(self.message.search(row.text))
        return bool(self.origin.match(row_dict.get("origin", "") or ""))


def load_exceptions(path=EXCEPTIONS_TSV, known=None):
    """Reads the reviewed exception list: tab-separated project ('*' for any), origin
    ('path', 'path:line', globs allowed) or /regex/ on the message, cause, reason; lines
    starting with '#' are comments. Raises ValueError on a malformed line, or on a cause
    outside `known` when it is given."""
    out = []
    if not os.path.exists(path):
        return out
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            parts = line.split("\t")
            if len(parts) != 4 or not all(p.strip() for p in parts):
                raise ValueError("%s:%d: expected 4 tab-separated fields: project, origin or /regex/, cause, reason"
                                 % (path, n))
            project, selector, cause, reason = (p.strip() for p in parts)
            if known is not None and cause not in known:
                raise ValueError("%s:%d: cause %r is not a taxonomy id" % (path, n, cause))
            try:
                out.append(_Exception(project, selector, cause, reason))
            except re.error as e:
                raise ValueError("%s:%d: %s" % (path, n, e))
    return out


def taxonomy_ids(root=None):
    """The ids of rules/taxonomy.toml, `unclassified` included."""
    import tomllib
    root = root or os.path.dirname(os.path.dirname(HERE))
    with open(os.path.join(root, "rules", "taxonomy.toml"), "rb") as f:
        return {t["id"] for t in tomllib.load(f).get("taxonomy", [])} | {"unclassified"}


EXCEPTIONS = load_exceptions()

# ------------------------------------------------------------------------------------------
# API
# ------------------------------------------------------------------------------------------


def classify(row, project):
    """(cause, why) for one extracted row of `project`."""
    r = _Row(row, project)
    for e in EXCEPTIONS:
        if e.matches(row, r):
            return e.cause, "exception: reviewed (%s)" % e.reason
    for rule in COMPILED:
        if rule.matches(r):
            return rule.cause, rule.why
    return "unclassified", "default"


def causes_produced():
    """Every taxonomy id the rules and the exception list can give, `unclassified` aside."""
    return sorted(({r.cause for r in COMPILED} | {e.cause for e in EXCEPTIONS}) - {"unclassified"})


def _main(argv):
    ap = argparse.ArgumentParser(description="Classify extracted error sites (a review aid).")
    ap.add_argument("rows", help="JSON lines of extracted rows ('-' for stdin)")
    ap.add_argument("--project", default="", help="project name for rows that carry none")
    ap.add_argument("--cause", help="print only the rows given this id")
    ap.add_argument("--why", help="print only the rows whose why contains this text")
    ap.add_argument("--summary", action="store_true", help="counts per cause and per rule instead of rows")
    a = ap.parse_args(argv)
    src = sys.stdin if a.rows == "-" else open(a.rows, encoding="utf-8")
    per_cause, per_why = collections.Counter(), collections.Counter()
    w = csv.writer(sys.stdout, delimiter="\t", lineterminator="\n")
    for line in src:
        if not line.strip():
            continue
        row = json.loads(line)
        cause, why = classify(row, row.get("project") or a.project)
        per_cause[cause] += 1
        per_why[(cause, why)] += 1
        if a.summary or (a.cause and cause != a.cause) or (a.why and a.why not in why):
            continue
        form = (row.get("forms") or [row.get("template", "")])[0]
        w.writerow([cause, why, row.get("origin", ""), form.replace("\n", " ")[:300]])
    if a.summary:
        for c, n in per_cause.most_common():
            print("%6d  %s" % (n, c))
        print()
        for (c, why), n in sorted(per_why.items(), key=lambda x: (x[0][0], -x[1])):
            print("%6d  %-28s %s" % (n, c, why))
    return 0


if __name__ == "__main__":
    sys.exit(_main(sys.argv[1:]))
