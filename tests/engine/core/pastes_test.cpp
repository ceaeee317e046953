// Pasted fragments: the few lines a user pastes when asking for help, each in the words and
// format of the program that prints them (the sources named beside each), read through the whole
// pipeline with the shipped rules. A fragment that ends in an error is a failure (TAXONOMY.md,
// "Fragments"); its first root cause must be the kind its program's message means, and a
// fragment whose last word is a warning of a program that goes on is no incident.
#include <gtest/gtest.h>

#include <fstream>
#include <iterator>
#include <string>

#include "test_util.h"

namespace triage::core {
namespace {

struct Paste {
  const char* kind;   // what the fragment shows, for the failure message
  const char* text;
  const char* cause;  // taxonomy id of the first root cause, or "" for no incident
};

const Paste kPastes[] = {
    // Ollama short of host memory for a model (no cause the taxonomy has: its own words); vLLM
    // without its optional FP8 kernels' package
    {"Ollama host memory", "Error: model requires more system memory (42.0 GiB) than is available (31.2 GiB)\n", "unclassified"},
    {"vLLM DeepGEMM", "RuntimeError: DeepGEMM backend is not available or outdated.\nPlease install or update the `deep_gemm` "
     "to a newer version to enable FP8 kernels.\n", "python.module_missing"},
    // OpenMMLab's registry without the type; a shell without nvidia-smi; PyTorch's driver check
    // without its version; SIGFPE as a shell reports it; pybind11's unregistered type at import
    {"registry without the type", "KeyError: 'BEVDetHead is not in the mmdet3d::model registry. Please check whether the value "
     "of `BEVDetHead` is correct or it was registered as expected.'\n", "config.invalid"},
    {"no nvidia-smi", "bash: nvidia-smi: command not found\n", "cuda.no_device"},
    {"torch driver check, no version", "RuntimeError: The NVIDIA driver on your system is too old\n", "cuda.driver_too_old"},
    {"SIGFPE from the shell", "./run.sh: line 9: 4242 Floating point exception(core dumped) python3 train.py\n", "native.crash"},
    {"pybind11 unregistered type", "ImportError: arg(): could not convert default argument 'stream: tv::Stream' in function "
     "'run' into a Python object (type not registered yet?)\n", "python.version_conflict"},
    // Triton without the driver's unversioned libcuda.so; OpenGL without the NVIDIA driver's on
    // Windows; a model file the script opens by a relative name
    {"Triton libcuda.so", "AssertionError: libcuda.so cannot found!\n", "native.lib_not_found"},
    {"WGL software renderer", "[F glutil.cpp:66] wglGetProcAddress() failed for 'glTexStorage2D'\n", "native.lib_not_found"},
    {"ONNX model file", "FileNotFoundError: [Errno 2] No such file or directory: 'models/encoder.onnx'\n", "model.load_failed"},
    // ptxas: PTX for a newer SM than the GPU's, a kernel over the block's shared memory; nvidia-smi
    // without NVML; the container CLI and enroot refused by the kernel
    {"ptxas newer target", "ptxas fatal   : SM version specified by .target is higher than default SM version assumed\n",
     "cuda.no_kernel_image"},
    {"ptxas shared data", "ptxas error   : Entry function 'reduce' uses too much shared data (0xc010 bytes, 0xc000 max)\n",
     "jit.build_failed"},  // TAXONOMY.md names ptxas errors as a build failure's evidence
    {"nvidia-smi without NVML", "NVIDIA-SMI couldn't find libnvidia-ml.so library in your system. Please make sure that the NVIDIA "
     "Display Driver is properly installed and present in your system.\n", "cuda.no_device"},
    {"container CLI lookup", "nvidia-container-cli: container error: file lookup failed: /proc/77/root/etc/os-release: permission denied\n",
     "host.permission"},
    {"capability refused", "enroot-aufs2ovlfs: failed to set capabilities: Operation not permitted\n", "host.permission"},
    // Transformer Engine's FP8 gate; Megatron-LM's checkpoint arguments; vLLM's Ray placement on a
    // node without a GPU; a keyword refused, pasted without its exception's name
    {"Transformer Engine FP8", "AssertionError: Device compute capability 8.9 or higher required for FP8 execution.\n",
     "lib.arch_unsupported"},
    {"Megatron checkpoint arguments",
     "AssertionError: pipeline_model_parallel_size value from checkpoint (4) is not equal to the input argument value (2).\n",
     "config.invalid"},
    {"vLLM Ray node without GPU",
     "ValueError: Current node has no GPU available. current_node_resource={'CPU': 8.0, 'memory': 1.0}. vLLM engine "
     "cannot start without GPU.\n",
     "cuda.no_device"},
    {"keyword refused, bare", "LLMConfig.__init__() got an unexpected keyword argument 'enable_chunked_prefill'\n",
     "python.symbol_missing"},
    // TensorRT: its allocator's words, its parsers' refusals, and Triton's missing backend
    {"TensorRT OutOfMemory",
     "[E] [TRT] 2: [virtualMemoryBuffer.cpp::resizePhysical::145] Error Code 2: OutOfMemory (no further information)\n",
     "cuda.oom"},
    {"UFF unsupported operation", "ERROR: [TRT]: UffParser: Validator error: Resize_1: Unsupported operation _ResizeNearest_TRT\n",
     "engine.model_unsupported"},
    {"UFF unreadable", "ERROR: [TRT]: UffParser: Could not read buffer.\n", "model.load_failed"},
    {"Triton platform", "E0301 10:00:00.000000 1 model_repository_manager.cc:1519] unexpected platform type pytorch_libtorch for resnet\n",
     "engine.model_unsupported"},
    // NVENC and NVDEC: the API newer than the driver, an entry point the driver lacks, a GPU
    // without an encoder, a stream the decoder cannot take, and a player that decodes on the CPU
    {"NvEncodeAPI version", "RuntimeError: LoadNvEncAPI : Current Driver Version does not support this NvEncodeAPI version, please upgrade driver at NvEncoder.cpp:82\n",
     "cuda.driver_too_old"},
    {"cuvid entry point", "[h264_cuvid @ 0x55d0c0a0] Cannot load cuvidGetDecodeStatus\n", "cuda.driver_too_old"},
    {"NVENC device", "[hevc_nvenc @ 0x5620aa00] OpenEncodeSessionEx failed: unsupported device (2)\n"
     "[hevc_nvenc @ 0x5620aa00] No NVENC capable devices found\n", "lib.arch_unsupported"},
    {"NVDEC bit depth", "[hevc_cuvid @ 0x55aa0010] Bit depth 12 is not supported.\n", "lib.arch_unsupported"},
    {"software decoding after NVDEC", "[ffmpeg/video] hevc_cuvid: cuvidCreateDecoder(&cudec, &cuinfo) failed -> "
     "CUDA_ERROR_NO_DEVICE: no CUDA-capable device is detected\nCould not open codec.\nUsing software decoding.\n", ""},
    // the loader on a library cut to nothing
    {"library file too short", "./app: error while loading shared libraries: /usr/lib/x86_64-linux-gnu/libnvinfer.so.8: file too short\n",
     "native.lib_not_found"},
    // builds: gcc's C++ diagnostics, a standard header older compilers lack, apex's CUDA check
    {"gcc undeclared", "error: 'NVDS_MODE_GPU' was not declared in this scope\n", "jit.build_failed"},
    {"standard header", "src/util.cpp:9:10: fatal error: filesystem: No such file or directory\n", "jit.build_failed"},
    {"apex CUDA check", "RuntimeError: Cuda extensions are being compiled with a version of Cuda that does not match the "
     "version used to compile Pytorch binaries.  Pytorch binaries were compiled with Cuda 12.1.\n",
     "python.version_conflict"},
    // OptiX: optixInit refused by a driver older than the SDK (the OptiX 7 course's OPTIX_CHECK
    // prints the code), a code by its name, and its compile feedback on PTX for a newer GPU
    {"OptiX init, ABI code", "Optix call (optixInit()) failed with code 7801 (line 98)\n", "cuda.driver_too_old"},
    {"OptiX result name", "RuntimeError: OptiX call failed: OPTIX_ERROR_FUNCTION_TABLE_SIZE_MISMATCH\n",
     "cuda.driver_too_old"},
    {"OptiX PTX for a newer architecture",
     "Error: Invalid target architecture. Maximum feasible for current context: sm_61, found: sm_75\n",
     "cuda.no_kernel_image"},
    // Blender Cycles: cuew's words for the driver's error before the call that failed
    {"Cycles device allocation", "Out of memory in cuMemAlloc(&device_pointer, size) (device_impl.cpp:793)\n",
     "cuda.oom"},
    // PhysX: its CUDA context manager's driver check, and the GPU pipeline's buffer capacities
    {"PhysX driver check",
     "PhysX: CudaContextManager.cpp (635) : warning : CUDA driver version is 10010, expected at least 11040.\n",
     "cuda.driver_too_old"},
    {"PhysX patch buffer", "[error] Patch buffer overflow detected, please increase its size to at least 1048576 in the scene desc!\n",
     "config.invalid"},
    // EGL with no NVIDIA vendor library behind it (nvdiffrast's OpenGL context)
    {"EGL initialisation", "RuntimeError: eglInitialize() failed\n", "native.lib_not_found"},
    // THCudaCheck, PyTorch's CUDA check before 1.5
    {"THC runtime error", "RuntimeError: cuda runtime error (2) : out of memory at /opt/conda/conda-bld/pytorch/aten/src/THC/generic/THCStorage.cu:58\n",
     "cuda.oom"},
    // PaddleOCR's predictor, and Paddle's dynamic loader (whose older releases print "isnot")
    {"PaddleOCR model file", "ValueError: not find model file path ./inference/rec/inference.pdmodel\n",
     "model.load_failed"},
    {"Paddle dynload", "E0301 10:00:00.000000    77 dynamic_loader.cc:307] The third-party dynamic library (libcublas.so) that Paddle depends on isnot configured correctly. (error code is libcublas.so: cannot open shared object file: No such file or directory)\n",
     "native.lib_not_found"},
    // CTranslate2's CUDA_CHECK and CUBLAS_CHECK (include/ctranslate2/cuda/utils.h): the runtime's
    // error string, or the cuBLAS status name, after its own words.
    {"CTranslate2 CUDA_CHECK, out of memory", "RuntimeError: CUDA failed with error out of memory\n", "cuda.oom"},
    {"CTranslate2 CUBLAS_CHECK, no kernel for the type",
     "RuntimeError: cuBLAS failed with status CUBLAS_STATUS_NOT_SUPPORTED\n", "lib.arch_unsupported"},
    // cuDNN 9's loader, when a sub-library it opened lacks an entry point; cuDNN 8's, when it finds
    // no sub-library
    {"cuDNN 9 symbol load", "Invalid handle. Cannot load symbol cudnnCreateTensorDescriptor\n",
     "native.lib_not_found"},
    {"cuDNN 8 library locate", "Could not locate zlibwapi.dll. Please make sure it is in your PATH.\n",
     "native.lib_not_found"},
    // trantor's log format (drogon; cortex.cpp under Jan): compact date, zone, thread id, level
    {"trantor ERROR line, engine library",
     "20241128 03:48:41.743000 UTC 21264 ERROR Could not load engine: Could not load library "
     "\"C:\\app\\engines\\engine.dll\" - server.cc:299\n",
     "native.lib_not_found"},
    // Linux before 4.19, mem_cgroup_print_oom_info
    {"memory cgroup OOM, old kernel",
     "[Thu Mar 20 21:01:25 2025] Task in /docker/6b45 killed as a result of limit of /docker/6b45\n"
     "[Thu Mar 20 21:01:25 2025] Mem-Info:\n",
     "host.oom_killed"},
    // gguf-py's IntEnum lookup of a code it does not know
    {"gguf reader older than the file", "ValueError: 17 is not a valid GGMLQuantizationType\n",
     "engine.model_unsupported"},
    // Error lines in the words of programs that print them bare: LLVM's report_fatal_error, the
    // CUDA compiler drivers' refusals, an absl status (XLA, jaxlib), a CUDA error a native
    // program prints (ggml's CUDA_CHECK with cuBLAS's status text), pytest's exception line. A
    // fragment that ends with one is a failure, with the program's message as its title.
    {"LLVM fatal error", "LLVM ERROR: Cannot select: intrinsic %llvm.nvvm.shfl.sync.idx.i32\n", "unclassified"},
    {"nvcc refusing an option", "nvcc fatal   : Unknown option '-static-global-template-stub=false'\n",
     "unclassified"},
    {"absl status printed bare", "INTERNAL: cuSolver invalid value error\n", "unclassified"},
    {"ggml CUDA_CHECK", "CUDA error: an internal operation failed\n  current device: 0, in function "
     "ggml_cuda_mul_mat_batched_cublas at ggml-cuda.cu:1891\n", "unclassified"},
    // pip's refusal of a pinned requirement: the pin names a version, and the line is still
    // pip's error (src/pip/_internal/resolution, "Could not find a version that satisfies")
    {"pip without a matching distribution",
     "ERROR: Could not find a version that satisfies the requirement torch==2.11.0+cu130 (from "
     "versions: none)\nERROR: No matching distribution found for torch==2.11.0+cu130\n",
     "unclassified"},
    // nvcc's refusal of an architecture, by what the architecture is: one no toolkit in use
    // targets (Fermi, Kepler: the build names it, the toolkit is too new), no number at all (the
    // build's GPU detection failed), one a paste cut before its closing quote
    {"nvcc, Fermi architecture", "nvcc fatal   : Unsupported gpu architecture 'compute_20'\n",
     "jit.build_failed"},
    {"nvcc, architecture not detected", "nvcc fatal   : Unsupported gpu architecture 'compute_N'\n",
     "jit.build_failed"},
    {"nvcc, Pascal, cut quote", "nvcc fatal   : Unsupported gpu architecture 'compute_61\n",
     "cuda.toolkit_too_old_for_arch"},
    {"nvcc 13, Volta",
     "-- The CUDA compiler identification is NVIDIA 13.0.48\nnvcc: NVIDIA (R) Cuda compiler driver\n"
     "Cuda compilation tools, release 13.0, V13.0.48\n"
     "nvcc fatal   : Unsupported gpu architecture 'compute_70'\n", "jit.build_failed"},
    // setuptools' report of a compiler that failed, as Windows writes it
    {"setuptools, nvcc.exe failed",
     "error: command 'C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v11.3\\bin\\nvcc.exe' "
     "failed with exit code 4294967295\n", "jit.build_failed"},
    // glibc's assert() pasted without the program's name before it
    {"assertion alone", "Assertion `parentOp->getNumRegions() == 1' failed\n", "native.crash"},
    // jax_plugins' check of the CUDA libraries against the ones jaxlib was built with
    {"JAX CUDA library older than its build",
     "Found cuSOLVER version 11405, but JAX was built against version 11600, which is newer.\n",
     "python.version_conflict"},
    // pytest's exception line, indented as deep as the source it quotes
    {"pytest exception line, deep",
     ">           raise RuntimeError(\nE           RuntimeError: Unable to JIT load the async_io op due to "
     "it not being compatible due to hardware/software issue.\n", "jit.build_failed"},
    // Windows' loader: a DLL that is not there, and one that lacks a procedure (ERROR_PROC_NOT_FOUND,
    // an extension built against another torch), whichever way Python's importer words the first
    {"Windows loader dialog, DLL not found", "System error - cudart64_12.dll not found\n",
     "native.lib_not_found"},
    {"DLL without the procedure",
     "ImportError: DLL load failed while importing _C: The specified procedure could not be found.\n",
     "native.undefined_symbol"},
    {"loader dialog, entry point",
     "The procedure entry point ?numel@TensorImpl@c10@@QEBA_JXZ could not be located in the dynamic "
     "link library C:\\env\\lib\\site-packages\\xformers\\_C.pyd.\n", "native.undefined_symbol"},
    // an NTSTATUS error code that a launcher sign-extends and prints unsigned
    {"NTSTATUS printed as an unsigned 64-bit exit code",
     "Error loading model.\n(Exit code: 18446744072635812000). Unknown error.\n", "native.crash"},
    // ggml's report of the operation whose CUDA call failed
    {"ggml operation failed", "ggml_cuda_compute_forward: RMS_NORM failed\n", "unclassified"},
    // an exception line pasted with a blank before it
    {"exception line after a blank", " AttributeError: 'NoneType' object has no attribute 'VARLEN_LSE_PACKED'\n",
     "unclassified"},
    {"pytest exception line", "E   RuntimeError: expected scalar type Float but found Half\n", "unclassified"},
    // CUDA's "unknown error" where PyTorch first initialises it: the device did not come up
    {"PyTorch CUDA init, unknown error", "RuntimeError: CUDA unknown error - this may be due to an incorrectly "
     "set up environment, e.g. changing env variable CUDA_VISIBLE_DEVICES after program start. Setting the "
     "available devices to be zero.\n", "cuda.no_device"},
    {"THC init, unknown error",
     "RuntimeError: cuda runtime error (30) : unknown error at /w/aten/src/THC/THCGeneral.cpp:51\n", "cuda.no_device"},
    // Python's Windows loader (ctypes) naming the DLL it could not load
    {"ctypes on Windows", "FileNotFoundError: Could not find module 'C:\\env\\Lib\\site-packages\\torch\\lib\\"
     "caffe2_nvrtc.dll' (or one of its dependencies). Try using the full path with constructor syntax.\n",
     "native.lib_not_found"},
    // a library's own lookup of an entry point the loaded library lacks; CUDA's error string of
    // the same words is no symbol's name
    {"dlsym by a library", "XlaRuntimeError: INTERNAL: operation cudaGetLastError() failed: cudaGetErrorString "
     "symbol not found.\n", "native.undefined_symbol"},
    {"CUDA's named symbol error", "RuntimeError: CUDA error: named symbol not found\n", "unclassified"},
    // the same enum words of another type are no file format's
    {"an enum of the program's own", "ValueError: 17 is not a valid Color\n", "unclassified"},
    // Containers and nodes without their GPUs: NVML after the device cgroup lost the GPUs, runc
    // asked for a device node the host lacks, the docker client's error line, the kernel's first
    // line of a driver mismatch read line by line, an application's own driver check (Omniverse
    // Kit's "[Error] [plugin]" record), PyTorch's device count assertion (a MIG instance)
    {"NVML in a container, device cgroup lost", "# nvidia-smi\nFailed to initialize NVML: Unknown Error\n",
     "cuda.no_device"},
    {"runc, a device node the host lacks",
     "docker: Error response from daemon: failed to create shim task: OCI runtime create failed: linux runtime "
     "spec devices: error gathering device information while adding custom device \"/dev/nvidia0\": lstat "
     "/dev/nvidia0: no such file or directory: unknown.\n", "cuda.no_device"},
    {"NVRM mismatch, first line alone",
     "Aug 26 14:08:07 host kernel: NVRM: API mismatch: the client has the version 367.44, but\n"
     "                              NVRM: this kernel module has the version 367.35.  Please\n",
     "cuda.driver_too_old"},
    {"an application's driver check",
     "2025-09-13T15:46:36Z [35,494ms] [Error] [gpu.foundation.plugin] The currently installed NVIDIA graphics "
     "driver is unsupported or has known issues. The unsupported driver range: [0.0, 535.129)\n",
     "cuda.driver_too_old"},
    {"PyTorch device count assertion",
     "RuntimeError: device >= 0 && device < num_gpus INTERNAL ASSERT FAILED at \"/w/aten/src/ATen/cuda/"
     "CUDAContext.cpp\":50, please report a bug to PyTorch.\n", "cuda.no_device"},
    // the driver's kernel module that does not build; Compose refusing its file; Triton
    // Inference Server's signal handler; mpirun's report of a rank killed by SIGILL
    {"nvidia-installer", "ERROR: An error occurred while performing the step: \"Building kernel modules\". "
     "See /var/log/nvidia-installer.log for details.\n", "jit.build_failed"},
    {"docker-compose file", "The Compose file './docker-compose.yaml' is invalid because:\nservices.sd.deploy."
     "resources.reservations value Additional properties are not allowed ('devices' was unexpected)\n",
     "config.invalid"},
    {"Triton server signal", "I0310 06:25:39.003694 1 http_server.cc:320] Started Metrics Service at 0.0.0.0:8002\n"
     "Signal (11) received.\n 0# 0x000055815783D8AD in tritonserver\n", "native.crash"},
    {"mpirun, SIGILL", "mpirun noticed that process rank 0 with PID 0 on node n1 exited on signal 4 (Illegal "
     "instruction).\n", "native.crash"},
    // Jobs: NCCL's WARN is its error level; gloo and c10d reaching a wrong address; MPI's fatal
    // error handler; Slurm's OOM report; argparse with a prog of several words
    {"NCCL WARN ends the paste", "r1:202016:202235 [0] misc/shmutils.cc:132 NCCL WARN Error while creating "
     "shared memory segment /dev/shm/nccl-WU88OE (size 9637888), error: No space left on device (28)\n",
     "host.shm_exhausted"},
    {"NCCL WARN bare", "NCCL WARN NET/IB : Got async event : port error\n", "nccl.failure"},
    {"gloo connect", "[/w/gloo/gloo/transport/tcp/pair.cc:761] connect [127.0.1.1]:60817: Connection refused\n",
     "nccl.failure"},
    {"TCPStore resolving MASTER_ADDR", "    store = TCPStore(master_addr, master_port, start_daemon)\n"
     "ValueError: host not found: Name or service not known\n", "nccl.failure"},
    {"Open MPI fatal handler", "[h:04122] *** An error occurred in MPI_Bcast\n[h:04122] *** reported by process "
     "[2611150849,0]\n[h:04122] *** MPI_ERRORS_ARE_FATAL (processes in this communicator will now abort,\n",
     "nccl.failure"},
    {"Slurm OOM", "slurmstepd: error: Detected 1 oom-kill event(s) in StepId=9411285.0. Some of your processes may "
     "have been killed by the cgroup out-of-memory handler.\nsrun: error: gpu20: task 0: Out Of Memory\n",
     "host.oom_killed"},
    {"transformers older than the model's rope_scaling",
     "ValueError: `rope_scaling` must be a dictionary with two fields, `type` and `factor`, got {'factor': 8.0, "
     "'low_freq_factor': 1.0, 'high_freq_factor': 4.0, 'original_max_position_embeddings': 8192, 'rope_type': "
     "'llama3'}\n", "engine.model_unsupported"},
    {"argparse, prog of words", "Accelerate CLI tool: error: unrecognized arguments: --deepspeed_multinode\n",
     "config.invalid"},
    // An exception line in the other shapes pastes give it: the base class itself, a space before
    // the colon, quoted, after a few words ending in a full-width colon, and the repr a program
    // logs of an exception it caught
    {"base Exception", "Exception: The nvidia driver version installed with this OS does not give good results\n",
     "unclassified"},
    {"space before the colon", "ValueError : the batch holds 3 columns where the collator expects 4\n",
     "unclassified"},
    {"quoted error line", "\"Error: Library cublas64_12.dll is not found or cannot be loaded\"\n",
     "native.lib_not_found"},
    {"words and a full-width colon first", "int4 \xe6\x8a\xa5\xe9\x94\x99\xef\xbc\x9aRuntimeError: self and mat2 must have the same dtype\n",
     "unclassified"},
    {"repr of a caught exception", "Generation failed: RuntimeError('Library cudart is not initialized')\n",
     "native.lib_not_found"},
    // zsh's report of a job it saw killed, after the progress bar the kill cut
    {"zsh, killed job", "Loading checkpoint shards:  88%|######    | 7/8 [00:12<00:01,  1.84s/it][1]    14875 killed"
     "     python main.py --low_vram\n", "host.oom_killed"},
    // TensorFlow's stream executor, a cuDNN handle it could not set up (cuda_dnn.cc)
    {"TensorFlow cuDNN handle", "2020-11-25 09:06:12.391615: E tensorflow/stream_executor/cuda/cuda_dnn.cc:328] "
     "Could not create cudnn handle: CUDNN_STATUS_INTERNAL_ERROR\n", "cuda.oom"},
    // transformers' modeling_utils.py, a quantized model moved by the program, in an older wording
    {"bitsandbytes model moved", "ValueError: `.to` is not supported for `4-bit` or `8-bit` bitsandbytes models. "
     "Please use the model as it is, since the model has already been set to the correct devices and casted to the "
     "correct `dtype`.\n", "config.invalid"},
    // an error message alone, without a level or an error word: the tables know it (CTranslate2's
    // src/types.cc, TGI's models/__init__.py)
    {"CTranslate2 compute type, bare", "Requested float16 compute type, but the target device or backend do not "
     "support efficient float16 computation.\n", "config.invalid"},
    {"TGI AutoModel", "ValueError: sharded is not supported for AutoModel\n", "engine.model_unsupported"},
    // PyTorch's report that CUDA did not initialize is a warning (torch/cuda/__init__.py), and
    // the process has no GPU from then on
    {"PyTorch CUDA initialization warning",
     "/env/lib/python3.10/site-packages/torch/cuda/__init__.py:52: UserWarning: CUDA initialization: The NVIDIA "
     "driver on your system is too old (found version 10010). Please update your GPU driver.\n"
     "  return torch._C._cuda_getDeviceCount() > 0\nFalse\n", "cuda.driver_too_old"},
    // c10d's TCPStore asked for libuv by a build without it (Windows wheels)
    {"TCPStore without libuv", "RuntimeError: use_libuv was requested but PyTorch was build without libuv support\n",
     "config.invalid"},
    // A glog CHECK on a library status, and the abort after it: the status is the cause (Caffe's
    // CUDNN_CHECK and CUDA_CHECK; cudnnStatus_t, cudaGetErrorString)
    {"glog CHECK on a cuDNN status", "F0101 10:00:00.000001  4242 cudnn_conv_layer.cpp:32] Check failed: status == "
     "CUDNN_STATUS_SUCCESS (6 vs. 0)  CUDNN_STATUS_ARCH_MISMATCH\n*** Check failure stack trace: ***\nAborted (core "
     "dumped)\n", "lib.arch_unsupported"},
    {"glog CHECK on a CUDA error", "F0101 10:00:00.000001  4242 im2col.cu:61] Check failed: error == cudaSuccess "
     "(8 vs. 0)  invalid device function\n", "cuda.no_kernel_image"},
    // A table's warning row (accelerate's utils/dataclasses.py), then a crash: the warning tells
    // what a failure may mean, and is not the cause of the crash after it
    {"a table's warning, then a segfault", "WARNING accelerate: Async tensor parallelism is currently not "
     "supported, ignoring this option.\nstep 1\nFatal Python error: Segmentation fault\nSegmentation fault (core "
     "dumped)\n", "native.crash"},
    // Thrust's system_error: its context, then the runtime's error string
    {"Thrust launch, out of memory", "RuntimeError: after cudaLaunch in triple_chevron_launcher::launch(): out of "
     "memory\n", "cuda.oom"},
    {"a library's capability gate, 'or greater'", "RuntimeError: Device 0 does not have CUDA compute capability 6.0 "
     "or greater\n", "lib.arch_unsupported"},
    // Hydra's refusal of an override (hydra/_internal/config_loader_impl.py, OmegaConf's struct mode)
    {"Hydra override", "Could not override 'trainer.max_steps'.\nTo append to your config use "
     "+trainer.max_steps=10\nKey 'max_steps' is not in struct\n    full_key: trainer.max_steps\n\nSet the "
     "environment variable HYDRA_FULL_ERROR=1 for a complete stack trace.\n", "config.invalid"},
    // torch/utils/cpp_extension.py when torch.cuda.is_available() is False: alone, a hint (a
    // GPU-less image build prints it and succeeds); before the build's own refusal, its cause
    {"extension build without a CUDA runtime, alone", "No CUDA runtime is found, using "
     "CUDA_HOME='/usr/local/cuda'\n", ""},
    {"extension build without a CUDA runtime, then its failure", "No CUDA runtime is found, using "
     "CUDA_HOME='/usr/local/cuda'\nTraceback (most recent call last):\n  File \"setup.py\", line 40, in <module>\n"
     "    ext_modules=get_extensions(),\nRuntimeError: CUDA is not available to build the extension\n",
     "cuda.no_device"},
    {"a device index the process lacks", "ValueError: The requested device for vllm (cuda:3) is not available.\n",
     "cuda.no_device"},
    // NumPy 2's message to a module built for NumPy 1 (numpy/core/_multiarray_umath), cut by the paste
    {"NumPy 2 ABI, the message's tail", "If you are a user of the module, the easiest solution will be to\n"
     "downgrade to 'numpy<2' or try to upgrade the affected module.\nWe expect that some modules will need time to "
     "support NumPy 2.\nRuntimeError: Could not infer dtype of numpy.float32\n", "python.version_conflict"},
    {"a size check", "AssertionError: 48 is not divisible by 32\n", "config.invalid"},
    // a C program's own last words (GStreamer's sample applications)
    {"an element not created, exiting", "Could not get EGL display connection\nOne element could not be created. "
     "Exiting.\n", "unclassified"},
    {"'Error while' sentence", "Error while mapping dmabuf fd (1530) to EGLImage\n", "unclassified"},
    // transformers' resolve_trust_remote_code
    {"custom code without trust_remote_code", "ValueError: The repository /models/m contains custom code which must "
     "be executed to correctly load the model. You can inspect the repository content at /models/m .\nPlease pass "
     "the argument `trust_remote_code=True` to allow custom code to be run.\n", "config.invalid"},
    // torch/utils/cpp_extension.py _get_cuda_arch_flags: a value no GPU has, and a real one this
    // PyTorch does not know
    {"arch list value no GPU has", "ValueError: Unknown CUDA arch (14.2) or GPU not supported\n", "config.invalid"},
    {"arch list value newer than PyTorch", "ValueError: Unknown CUDA arch (12.0) or GPU not supported\n",
     "cuda.toolkit_too_old_for_arch"},
    // a POSIX shell running an option as a command (an option after the image instead of before it)
    {"option run as a command", "/.singularity.d/actions/exec: 9: exec: --nvccli: not found\n", "config.invalid"},
    // a program's own report of no GPU, and a library built without CUDA (DGL's device API check)
    {"no GPU device found", "        Error: No GPU device found!\n", "cuda.no_device"},
    {"a CPU build asked for CUDA", "dgl._ffi.base.DGLError: [10:00:00] /opt/dgl/src/runtime/c_runtime_api.cc:82: Check "
     "failed: allow_missing: Device API cuda is not enabled. Please install the cuda version of dgl.\n",
     "cuda.no_device"},
    // a library's allocation failure in its own words (FAISS's MemorySpace.cpp)
    {"cudaMalloc failure in a library's words", "RuntimeError: Error in void faiss::gpu::allocMemorySpaceV(...) at "
     "gpu/utils/MemorySpace.cpp:26: Error: 'err == cudaSuccess' failed: failed to cudaMalloc 1048576 bytes (error 2 out "
     "of memory)\n", "cuda.oom"},
    // text-embeddings-inference's candle backend on a GPU its build does not cover
    {"compute cap of the build", "Error: Could not create backend\n\nCaused by:\n    Could not start backend: Runtime "
     "compute cap 70 is not compatible with compile time compute cap 80\n", "cuda.no_kernel_image"},
    // two builds that disagree: CUDA versions, a Cython C-API
    {"extension of other CUDA", "RuntimeError: Detected that PyTorch and torch_scatter were compiled with different "
     "CUDA versions. PyTorch has CUDA version 11.8 and torch_scatter has CUDA version 12.1.\n",
     "python.version_conflict"},
    {"Cython C-API of another build", "ImportError: pkg._lib.core does not export expected C function make_column\n",
     "python.version_conflict"},
    {"an optional package", "ImportError: 'NeighborLoader' requires either 'pyg-lib' or 'torch-sparse'\n",
     "python.module_missing"},
    {"a shared object not there", "File libfoo_gpu.so not found\n", "native.lib_not_found"},
    {"HF hub unreachable", "requests.exceptions.ConnectionError: HTTPSConnectionPool(host='huggingface.co', port=443): "
     "Max retries exceeded with url: /api/models/org/model (Caused by NewConnectionError('failed'))\n",
     "model.load_failed"},
    {"an engine choice refused", "ValueError: Invalid embedding engine: FastText\n", "config.invalid"},
    {"a bare exception", "    assert key in mapping\nAssertionError\n", "unclassified"},
    // vLLM's per-prompt multimodal limit (--limit-mm-per-prompt), and a model version its
    // implementation does not know yet
    {"multimodal items over the limit", "ValueError: At most 2 image(s) may be provided in one prompt.\n",
     "config.invalid"},
    {"a model version the engine lacks", "ValueError: Currently, FooVL only supports versions 1.0, 2.0. Got version: "
     "(3, 0)\n", "engine.model_unsupported"},
    // Slurm refusing a job as requested, and failing to reach its controller (then the error
    // before it is the job's)
    {"Slurm request refused", "sbatch: error: Batch job submission failed: Invalid generic resource (gres) "
     "specification\n", "config.invalid"},
    {"Slurm controller out of reach", "OSError: We couldn't connect to 'https://huggingface.co' to load this file, "
     "couldn't find it in the cached files.\nsalloc: error: Job submit/allocate failed: Socket timed out on send/recv "
     "operation\n", "model.load_failed"},
    // FAISS's GPU index limits on a search parameter
    {"FAISS GPU k limit", "/faiss/gpu/impl/IndexUtils.cu:26: Error: 'k > 0 && k <= getMaxKSelection()' failed: GPU "
     "index only supports min/max-K selection up to 2048 (requested 3000)\n", "config.invalid"},
    // torch/_inductor/__init__.py list_mode_options
    {"torch.compile mode", "RuntimeError: Unrecognized mode=fastest, should be one of: default, reduce-overhead, "
     "max-autotune\n", "config.invalid"},
    {"a package's syntax newer than the interpreter", "Traceback (most recent call last):\n  File \"train.py\", line 3, "
     "in <module>\n    import pkg\n  File \"/opt/env/lib/python3.6/site-packages/pkg/core.py\", line 12\n    x = "
     "f'{a}'\n          ^\nSyntaxError: invalid syntax\n", "python.version_conflict"},
    // A library installed as its CPU-only build, asked for the GPU (XGBoost's AssertGPUSupport,
    // LightGBM's tree learners)
    {"XGBoost CPU build", "xgboost.core.XGBoostError: [10:21:33] ../src/common/common.h:239: XGBoost version not "
     "compiled with GPU support.\n", "cuda.no_device"},
    {"LightGBM CPU build", "lightgbm.basic.LightGBMError: CUDA Tree Learner was not enabled in this build.\nPlease "
     "recompile with CMake option -DUSE_CUDA=1\n", "cuda.no_device"},
    // RAPIDS' memory manager out of device memory (cut where the paste was), and a CUDA_CHECK macro's
    // file and line before the runtime's words
    {"RMM out of memory", "MemoryError: std::bad_alloc: out_of_memory: CUDA error at: "
     "/opt/conda/include/rmm/mr/dev\n", "cuda.oom"},
    {"CUDA_CHECK out of memory", "CUDA error: src/tree/gpu_hist/histogram.cu(88): out of memory\n", "cuda.oom"},
    // the driver's PTX compiler older than the PTX a JIT library wrote
    {"driver JIT PTX version", "numba.cuda.cudadrv.driver.LinkerError: [218] Call to cuLinkAddData results in "
     "UNKNOWN_CUDA_ERROR\nptxas application ptx input, line 9; fatal   : Unsupported .version 8.4; current version "
     "is '8.0'\nptxas fatal   : Ptx assembly aborted due to errors\n", "cuda.driver_too_old"},
    // kernels a program compiles at run time, refused
    {"CuPy runtime compile", "cupy.cuda.compiler.CompileException: /tmp/tmpk2/kern.cu(3): catastrophic error: cannot "
     "open source file \"cuda/std/cstdint\"\n", "jit.build_failed"},
    {"GROMACS GPU kernels", "Fatal error:\nFailed to compile NBNXN kernels for GPU #NVIDIA L40S\n", "jit.build_failed"},
    {"nvcc without MSVC", "nvcc fatal   : Cannot find compiler 'cl.exe' in PATH\n", "jit.build_failed"},
    // a library's parameter check refusing a parameter, or an option its GPU implementation lacks
    {"parameter refused by name", "_catboost.CatBoostError: Invalid param `border_count_gpu`.\n", "config.invalid"},
    {"option not on GPU", "_catboost.CatBoostError: catboost/private/libs/options/loss_description.cpp:101: "
     "Error: loss function Tweedie is not implemented for task type GPU\n", "config.invalid"},
    // conda's solvers and the host driver's __cuda virtual package
    {"conda __cuda constraint", "Could not solve for environment specs\n  - package pytorch-2.1.0-cuda118 has "
     "constraint __cuda >=11.8 conflicting with __cuda-11.4-0\n", "cuda.driver_too_old"},
    {"pixi without __cuda", "Error:   × Cannot install environment 'gpu'\n  ╰─▶ Virtual package '__cuda' does not "
     "match any of the available virtual packages on your machine: [__unix=0=0, __linux=5.15.0=0]\n",
     "config.invalid"},
    // JAX's CUDA plugin checking the CUDA libraries it loads
    {"JAX outdated cuDNN", "RuntimeError: Unable to use CUDA because of the following issues with CUDA components:\n"
     "Outdated cuDNN installation found.\nVersion JAX was built against: 91000\nMinimum supported: 91000\nInstalled "
     "version: 90300\n", "python.version_conflict"},
    {"JAX CUDA library missing", "RuntimeError: Unable to load cuBLAS. Is it installed?\n", "native.lib_not_found"},
    // PyTorch on Windows naming the DLL it could not load, with no WinError or with 126; with
    // another WinError (1455: the paging file) the reason is that error's
    {"torch DLL without WinError", "Error loading \"C:\\py\\Lib\\site-packages\\torch\\lib\\shm.dll\" or one of its "
     "dependencies.\n", "native.lib_not_found"},
    {"torch DLL, paging file", "OSError: [WinError 1455] The paging file is too small for this operation to "
     "complete. Error loading \"C:\\py\\Lib\\site-packages\\torch\\lib\\cudnn_adv64_9.dll\" or one of its "
     "dependencies.\n", "unclassified"},
    // a newer libstdc++ or glibc version than the one loaded: the loader finds no library of it
    {"libstdc++ too old", "ImportError: /usr/lib64/libstdc++.so.6: version `GLIBCXX_3.4.29' not found (required by "
     "/opt/env/lib/python3.11/site-packages/ext/_C.so)\n", "native.lib_not_found"},
    // errors in a program's own words, with no level word: unclassified failures, never silence
    {"uncaught exception", "Uncaught exception: Could not open snapshot file for reading\n", "unclassified"},
    {"Yandex util exception", "(TFileError) util/system/file.cpp:857: can't open \"/data/pool.cd\" with mode "
     "RdOnly (0x00000028)\n", "unclassified"},
    {"pip exception", "pip._internal.exceptions.DistributionNotFound: No matching distribution found for "
     "flash-attn==9.9\n", "unclassified"},
    {"conda exception", "EnvironmentLocationNotFound: Not a conda environment: /opt/envs/missing\n", "unclassified"},
    {"docker build step", "Step 7/12 : RUN pip install -r requirements.txt\nThe command '/bin/sh -c pip install -r "
     "requirements.txt' returned a non-zero code: 1\n", "unclassified"},
    // Omniverse Kit's crash reporter
    {"Kit crash reporter", "2026-01-02T10:00:00Z [12,345ms] [Fatal] [carb.crashreporter-breakpad.plugin] 000: "
     "libcarb.so!carbReallocate+0x1b\n", "native.crash"},
    // The driver and the GPUs it brings up (or not)
    {"DKMS build", "Building DKMS module 'nvidia-570.86' for kernel-6.12.1... FAILED!\nDKMS module 'nvidia-570.86' "
     "failed to build, please check /var/lib/dkms for errors in the log file\n", "jit.build_failed"},
    {"kernel driver finds no GPU", "[    3.201] NVRM: The NVIDIA probe routine failed for 1 device(s).\n[    3.202] "
     "NVRM: None of the NVIDIA devices were initialized.\n", "cuda.no_device"},
    {"Fabric Manager not running", "RuntimeError: CUDA error: system not yet initialized\n", "cuda.no_device"},
    {"nvidia-smi, typographic apostrophe", "NVIDIA-SMI has failed because it couldn’t communicate with the NVIDIA "
     "driver. Make sure that the latest NVIDIA driver is installed and running.\n", "cuda.no_device"},
    {"device node missing", "Error: lstat /dev/nvidia-uvm: no such file or directory\n", "cuda.no_device"},
    // NVENC and NVDEC as FFmpeg and OBS print their failures
    {"NVENC without a driver", "[h264_nvenc @ 0x55d1] Cannot load libcuda.so.1\nError initializing output stream "
     "0:0 -- Error while opening encoder for output stream #0:0\n", "cuda.no_device"},
    {"NVENC without its library", "[h264_nvenc @ 0x55d1] Cannot load libnvidia-encode.so.1\n[h264_nvenc @ 0x55d1] The "
     "minimum required Nvidia driver for nvenc is 550.54.15 or newer\n", "native.lib_not_found"},
    {"NVENC API newer than the driver", "[hevc_nvenc @ 0x1a2b] Driver does not support the required nvenc API "
     "version. Required: 13.0 Found: 12.1\n", "cuda.driver_too_old"},
    {"NVENC parameter refused", "[jim-nvenc] init_encoder_hevc: nv.nvEncInitializeEncoder(enc->session, "
     "&enc->params) failed: 8 (NV_ENC_ERR_INVALID_PARAM)\n", "config.invalid"},
    // libraries built without CUDA, other toolkits' words
    {"OpenCV without CUDA", "cv2.error: OpenCV(4.10.0) /io/opencv/modules/core/include/opencv2/core/private.cuda.hpp:"
     "106: error: (-216:No CUDA support) The library is compiled without CUDA support in function "
     "'throw_no_cuda'\n", "cuda.no_device"},
    {"TVM without CUDA", "tvm._ffi.base.TVMError: Check failed: bf != nullptr: Target cuda is not enabled\n",
     "cuda.no_device"},
    {"Paddle out of memory", "ResourceExhaustedError: \n\nOut of memory error on GPU 0. Cannot allocate 2.000000GB "
     "memory on GPU 0, 78.500000GB memory has been allocated and available memory is only 1.200000GB.\n",
     "cuda.oom"},
    {"ptxas older than the PTX", "ptxas /tmp/kernel.ptx, line 5; fatal   : Unsupported .version 8.7; current version "
     "is '8.4'\nptxas fatal   : Ptx assembly aborted due to errors\n", "cuda.toolkit_too_old_for_arch"},
    {"MSVC header missing", "kernels.cu(3): fatal error C1083: Cannot open include file: 'cuda_fp8.h': No such file "
     "or directory\n", "jit.build_failed"},
    {"GStreamer element missing", "WARNING: erroneous pipeline: no element \"nvv4l2h265enc\"\n", "config.invalid"},
    {"half precision on the CPU", "RuntimeError: \"addmm_impl_cpu_\" not implemented for 'Half'\n", "config.invalid"},
    {"Chainer without CuPy", "AttributeError: module 'chainer.backends.cuda' has no attribute 'cupy'\n",
     "python.module_missing"},
    {"Blender Cycles without a GPU", "Error: Found no Cycles device of the specified type\nBlender quit\n",
     "cuda.no_device"},
    // s43 to s45's kinds: capability gates in other words, NVIDIA's libraries' refusals, Triton
    // server's model configuration, hub downloads, packages named with their pip command
    {"FP8 needs a newer GPU", "AssertionError: Device compute capability 8.9 or higher required for FP8 "
     "execution.\n", "lib.arch_unsupported"},
    {"TensorRT without the GPU's SM", "[TRT] [E] 1: Unsupported SM: 0x700\n", "lib.arch_unsupported"},
    {"Triton model config datatype", "E1207 10:00:00.000 1 model_lifecycle.cc:654] failed to load 'ranker': "
     "unexpected datatype TYPE_INT32 for inference input 'ids', expecting TYPE_INT64\n", "config.invalid"},
    {"script's leftover options", "ValueError: Invalid options ['--sigma-infer', '0.9']\n", "config.invalid"},
    {"nvcc older than -arch=native", "nvcc fatal   : Value 'native' is not defined for option "
     "'gpu-architecture'\nmake: *** [Makefile:120: kernels.o] Error 1\n", "jit.build_failed"},
    {"docker without the NVIDIA runtime", "docker: Error response from daemon: could not select device driver with "
     "capabilities: [[gpu]]\n", "cuda.no_device"},
    {"OOM with its numbers cut", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate xxx GiB\n",
     "cuda.oom"},
    {"model checksum", "RuntimeError: Model has been downloaded but the SHA256 checksum does not match. Please "
     "retry loading the model.\n", "model.load_failed"},
    {"gated pipeline", "Could not download 'pyannote/segmentation-3.0' model.\nIt might be because the model is "
     "private or gated so make sure to authenticate.\n", "model.load_failed"},
    {"package named with its pip command", "ImportError: Using `low_cpu_mem_usage=True` or a `device_map` requires "
     "Accelerate: `pip install accelerate`\n", "python.module_missing"},
    {"Transformer Engine without its PyTorch part", "AttributeError: module 'transformer_engine' has no attribute "
     "'pytorch'\n", "python.module_missing"},
    {"AttributeError's message alone", "'tensorrt.tensorrt.Builder' object has no attribute 'max_workspace_size'\n",
     "python.symbol_missing"},
    {"optional package in a library's words", "ImportError: FlashAttention2 has been toggled on, but it cannot be "
     "used due to the following error: the package for FlashAttention2 doesn't seem to be installed.\n",
     "python.module_missing"},
    {"Java exception with its package", "Error message: org.bytedeco.javacv.FrameRecorder$Exception: avcodec_open2() "
     "error -22: Could not open video codec.\n", "unclassified"},
    // s46 to s48's kinds: RDMA and NCCL's network, kernel modules, platforms' limits
    {"libibverbs provider probe", "libibverbs: Warning: couldn't load driver 'libmlx4-rdmav34.so': libmlx4-rdmav34.so: "
     "cannot open shared object file: No such file or directory\n", ""},
    {"NCCL net plugin probe", "Unable to load libnccl-net.so : libnccl-net.so: cannot open shared object file: No "
     "such file or directory\n", ""},
    {"NCCL WARN without its host", "misc/socket.cc:488 NCCL WARN socketStartConnect: Connect to 10.0.0.2<43211> "
     "failed : Software caused connection abort\n", "nccl.failure"},
    {"RDMA memory lock limit", "[1730117228.17] [node1:3000:0] ib_iface.c:751 UCX ERROR ibv_create_cq(cqe=4096) "
     "failed: Cannot allocate memory\n", "host.permission"},
    {"kernel module symbols", "[ 12.5] nvidia_peermem: Unknown symbol ib_register_peer_memory_client (err -22)\n",
     "native.undefined_symbol"},
    {"diffusers weights file missing", "OSError: Error no file named diffusion_pytorch_model.safetensors found in "
     "directory /models/sdxl/unet.\n", "model.load_failed"},
    {"platform limit", "gradio.exceptions.Error: 'The requested GPU duration (240s) is larger than the maximum "
     "allowed'\n", "config.invalid"},
    {"Triton launcher stub compile", "subprocess.CalledProcessError: Command '['/usr/bin/gcc', '/tmp/tmpx/main.c', "
     "'-O3', '-shared', '-fPIC', '-o', '/tmp/tmpx/cuda_utils.so']' returned non-zero exit status 1.\n",
     "jit.build_failed"},
    // s49 and s51's kinds: Vulkan and OpenCL result codes, the GPU's performance counters
    {"Vulkan without a driver", "vkCreateInstance failed -9\ninvalid gpu device\n", "native.lib_not_found"},
    {"Vulkan device memory", "ggml_vulkan: Device memory allocation of size 118497280 failed.\nggml_vulkan: "
     "vk::Device::allocateMemory: ErrorOutOfDeviceMemory\n", "cuda.oom"},
    {"Vulkan code in TVM's words", "InternalError: Check failed: (__e == VK_SUCCESS) is false: Vulkan Error, "
     "code=-2: VK_ERROR_OUT_OF_DEVICE_MEMORY\n", "cuda.oom"},
    {"OpenCL without a platform", "pyopencl._cl.LogicError: clGetPlatformIDs failed: PLATFORM_NOT_FOUND_KHR\n",
     "native.lib_not_found"},
    {"OpenCL build", "OpenCL error code -11 at main.cpp [176]: clBuildProgram(program, 0, NULL, opts, NULL, NULL)\n",
     "jit.build_failed"},
    {"GPU counters for admins only", "==ERROR== ERR_NVGPUCTRPERM - The user does not have permission to access "
     "NVIDIA GPU Performance Counters on the target device 0.\n", "host.permission"},
    // s52 to s57's kinds: Windows front ends, clusters, the stack's Rust and C++ programs
    {"DirectML allocator", "RuntimeError: Could not allocate tensor with 20971520 bytes. There is not enough GPU "
     "video memory available!\n", "cuda.oom"},
    {"zsh job killed", "[2]  + 48211 killed     python3 convert.py --bits 4\n", "host.oom_killed"},
    {"interpreter without venv", "C:\\tools\\embedded\\python.exe: No module named venv\n", "python.module_missing"},
    {"build isolation without torch", "      Building cuda extension requires PyTorch (>=1.13.0) being installed, please "
     "install PyTorch first: No module named 'torch'\n", "python.module_missing"},
    {"ptxas on a PTX line", "ptxas /tmp/tmpxft_0002_00000000-9_gemm.compute_61.ptx, line 812; error   : Feature "
     "'cp.async' requires .target sm_80 or higher\n", "jit.build_failed"},
    {"Kubernetes RBAC", "E0301 08:00:00.000000 1 reflector.go:158] pods is forbidden: User "
     "\"system:serviceaccount:serve:engine\" cannot list resource \"pods\" in API group \"\" in the namespace \"serve\"\n",
     "host.permission"},
    {"admission webhook", "Error: admission webhook \"policy.example.com\" denied the request: GPU requests need a "
     "node selector\n", "config.invalid"},
    {"container command is an option", "Error: failed to start container \"plugin\": Error response from daemon: OCI "
     "runtime create failed: exec: \"--pass-device-specs=true\": executable file not found in $PATH: unknown\n",
     "config.invalid"},
    {"kernel missing from the module", "Error: DriverError(CUDA_ERROR_NOT_FOUND, \"named symbol not found\") when "
     "loading affine_bf16\n", "lib.arch_unsupported"},
    {"TensorRT 8 plan header", "[E] [TRT] C:\\src\\coreReadArchive.cpp (41) - Serialization Error in "
     "nvinfer1::rt::CoreReadArchive::verifyHeader: 0 (Version tag does not match. Note: Current Version: 89, Serialized "
     "Engine Version: 97)\n", "engine.model_unsupported"},
    {"container CLI capabilities", "nvidia-container-cli: permission error: capability change failed: operation not "
     "permitted\n", "host.permission"},
    {"cargo build script", "error: failed to run custom build command for `candle-kernels v0.8.0 (/src/candle-kernels)`\n",
     "jit.build_failed"},
    {"ComfyUI-Manager policy", "This action is not allowed with this security level configuration.\n", "config.invalid"},
    {"cudarc library search", "thread 'main' panicked at src/lib.rs:181:5: Unable to dynamically shared library - "
     "searched for library names: [\"curand64_10.dll\", \"curand64.dll\"]\n", "native.lib_not_found"},
    {"NCCL watchdog before PyTorch 2", "[E ProcessGroupNCCL.cpp:475] [Rank 1] Watchdog caught collective operation "
     "timeout: WorkNCCL(OpType=BROADCAST, Timeout(ms)=600000) ran for 600402 milliseconds before timing out.\n",
     "nccl.failure"},
    {"safetensors header after a wrapper's words", "Prompt failed: loader error: Error while deserializing header: "
     "HeaderTooSmall\n", "model.load_failed"},
    // s58 to s60's kinds: TensorFlow's and Theano's words, JAX's versions and gates
    {"TensorFlow's cuDNN check", "E tensorflow/stream_executor/cuda/cuda_dnn.cc:324] Loaded runtime CuDNN library: "
     "8.0.4 but source was compiled with: 8.1.0.  CuDNN library needs to have matching major version and equal or "
     "higher minor version.\n", "python.version_conflict"},
    {"nvidia-smi without devices", "$ nvidia-smi\nNo devices were found\n", "cuda.no_device"},
    {"Theano's allocator", "MemoryError: Error allocating 805306368 bytes of device memory (out of memory).\n",
     "cuda.oom"},
    {"TensorFlow's copy to a full GPU", "tensorflow.python.framework.errors_impl.InternalError: Dst tensor is not "
     "initialized.\n", "cuda.oom"},
    {"TensorFlow without NUMA", "I tensorflow/core/common_runtime/gpu/gpu_device.cc:955] could not open file to read "
     "NUMA node: /sys/bus/pci/devices/0000:03:00.0/numa_node\n", ""},
    {"TensorFlow's ptxas fallback", "W tensorflow/stream_executor/gpu/asm_compiler.cc:235] Your CUDA software stack "
     "is old. We fallback to the NVIDIA driver for some compilation. Update your CUDA version to get the best "
     "performance. The ptxas error was: ptxas fatal   : Value 'sm_89' is not defined for option 'gpu-name'\n", ""},
    {"jax ahead of jaxlib", "RuntimeError: jaxlib is version 0.4.1, but this version of jax requires version >= "
     "0.4.14.\n", "python.version_conflict"},
    {"PJRT plugin of another release", "RuntimeError: Unable to initialize backend 'cuda': INVALID_ARGUMENT: "
     "Unexpected PJRT_Client_Create_Args size: expected 96, got 88. The plugin is likely built with a later version "
     "than the framework.\n", "python.version_conflict"},
    {"XLA's ptxas older than its PTX", "F nvptx_compiler.cc:478] ptxas returned an error during compilation of ptx "
     "to sass: 'Internal: ptxas exited with non-zero error code 65280, output: ptxas /tmp/tempfile-node-1-2-3, line "
     "5; fatal   : Unsupported .version 7.4; current version is '7.0'\n", "cuda.toolkit_too_old_for_arch"},
    {"submodule a release removed", "ModuleNotFoundError: No module named 'torch._six'\n", "python.symbol_missing"},
    {"XLA's Triton gate", "jaxlib.xla_extension.XlaRuntimeError: FAILED_PRECONDITION: Triton support is only enabled "
     "for Ampere GPUs (compute capability 8.0) and up, but got compute capability 7.0.\n", "lib.arch_unsupported"},
    // s61 to s63's kinds: Ray's clusters, old runtimes' error numbers, notebooks' tracebacks
    {"Ray's object store over /dev/shm", "ValueError: The configured object store size exceeds the capacity of "
     "/dev/shm. This will harm performance.\n", "host.shm_exhausted"},
    {"Ray's autoscaler without a GPU node", "(autoscaler +12s) Error: No available node types can fulfill resource "
     "request {'CPU': 2.0, 'GPU': 1.0}. Add suitable node types to this cluster to resolve this issue.\n",
     "cuda.no_device"},
    {"Ray's task with an NCCL error", "ray.exceptions.RayTaskError(NcclError): ray::Trainer.step() (pid=812, "
     "ip=10.0.0.7)\n", "nccl.failure"},
    {"THC's invalid device function", "RuntimeError: cuda runtime error (8) : invalid device function at "
     "/build/torch/lib/THC/THCTensorCopy.cu:204\n", "cuda.no_kernel_image"},
    {"TensorFlow's convolution without cuDNN", "UnknownError: Failed to get convolution algorithm. This is "
     "probably because cuDNN failed to initialize, so try looking to see if a warning log message was printed "
     "above.\n", "cuda.oom"},
    {"a notebook's cut traceback", "---------------------------------------------------------------------------\n"
     "PermissionError                           Traceback (most recent call last)\n"
     "<ipython-input-3-9a1c> in <module>\n----> 1 ray.init()\n", "host.permission"},
    {"a site's message without its last stop", "Requested float16 compute type, but the target device or backend "
     "do not support efficient float16 computation\n", "config.invalid"},
    {"spdlog's warning of a fallback", "[ctranslate2] [thread 7] [warning] The compute type inferred from the saved "
     "model is int8_float16, but the target device or backend do not support efficient int8_float16 computation. "
     "The model weights have been automatically converted to use the int8_float32 compute type instead.\n", ""},
    // s64 to s66's kinds: OpenMMLab's registry and gates, DDP, FSDP and the launch
    {"a submodule a framework's 2.0 moved", "ModuleNotFoundError: No module named 'mmcv.runner'\n",
     "python.symbol_missing"},
    {"a compiled extension module missing", "ModuleNotFoundError: No module named 'mmcv._ext'\n",
     "python.module_missing"},
    {"mmcv's operator registry without CUDA", "RuntimeError: roi_align_forward_impl: implementation for device "
     "cuda:0 not found.\n", "jit.build_failed"},
    {"OpenMMLab's import-time gate", "AssertionError: MMCV==1.7.2 is used but incompatible. Please install "
     "mmcv>=2.0.0rc4, <2.2.0.\n", "python.version_conflict"},
    {"DDP's unused parameters", "RuntimeError: Expected to have finished reduction in the prior iteration before "
     "starting a new one. This error indicates that your module has parameters that were not used in producing "
     "loss.\n", "config.invalid"},
    {"no process group", "ValueError: Default process group has not been initialized, please make sure to call "
     "init_process_group.\n", "config.invalid"},
    {"FSDP over quantized weights", "ValueError: Cannot flatten integer dtype tensors\n", "config.invalid"},
    {"ZeRO-3 with a device map", "ValueError: DeepSpeed Zero-3 is not compatible with `low_cpu_mem_usage=True` or "
     "with passing a `device_map`.\n", "config.invalid"},
    {"accelerate's bf16 refusal", "ValueError: bf16 mixed precision requires PyTorch >= 1.10 and a supported "
     "device.\n", "config.invalid"},
    {"Ultralytics without a GPU", "ValueError: Invalid CUDA 'device=0' requested. Use 'device=cpu' or pass valid "
     "CUDA device(s) if available, i.e. 'device=0' or 'device=0,1,2,3' for Multi-GPU.\n", "cuda.no_device"},
    {"NCCL's segment in a small /dev/shm", "node1:811:902 [0] include/shm.h:28 NCCL WARN Error while creating "
     "shared memory segment /dev/shm/nccl-Qx81aZ (size 9637888)\n", "host.shm_exhausted"},
    {"torch's version compared by another release", "TypeError: '<' not supported between instances of "
     "'TorchVersion' and 'Version'\n", "python.version_conflict"},
    // s67 to s72's kinds: Jetson and container hosts, export and engine builds, graph and 3D
    // libraries, custom kernels
    {"Docker before 20.10 without the runtime", "docker: Error response from daemon: Unknown runtime specified "
     "nvidia.\n", "config.invalid"},
    {"pip and a wheel for another Python", "ERROR: onnxruntime_gpu-1.16.0-cp38-cp38-linux_aarch64.whl is not a "
     "supported wheel on this platform.\n", "python.version_conflict"},
    {"onnxruntime's CPU build", "CUDA execution provider is not enabled in this build.\n", "cuda.no_device"},
    {"vLLM's model interface", "NotImplementedError: LoRA is not supported for this model. Supported models "
     "implement the `SupportsLoRA` interface.\n", "engine.model_unsupported"},
    {"Ray's cluster of another release", "RuntimeError: Version mismatch: The cluster was started with:\n"
     "    Ray: 2.40.0\n    Python: 3.10.12\nThis process on node 10.0.0.7 was started with:\n"
     "    Ray: 2.41.0\n    Python: 3.10.12\n", "python.version_conflict"},
    {"the ONNX exporter's opset", "RuntimeError: Exporting the operator 'aten::unflatten' to ONNX opset version 12 "
     "is not supported.\n", "engine.model_unsupported"},
    {"TensorRT's dynamic shapes", "[12/01/2025-10:02:11] [E] Error[4]: Network has dynamic or shape inputs, but no "
     "optimization profile has been defined.\n[12/01/2025-10:02:11] [E] Error[2]: Network validation failed.\n",
     "config.invalid"},
    {"an NGC image on an older driver", "ERROR: This container was built for NVIDIA Driver Release 530.30 or later, "
     "but\n       version 470.57 was detected and compatibility mode is UNAVAILABLE.\n", "cuda.driver_too_old"},
    {"TensorRT's allocator", "[E] [TRT] 1: [defaultAllocator.cpp::allocate::20] Error Code 1: Cuda Runtime (out of "
     "memory)\n", "cuda.oom"},
    {"RMM's pool", "MemoryError: std::bad_alloc: out_of_memory: RMM failure at:/opt/conda/include/rmm/mr/device/"
     "pool_memory_resource.hpp:252: Maximum pool size exceeded\n", "cuda.oom"},
    {"DGL without its tensor adapter", "[12:01:07] /opt/dgl/src/runtime/tensordispatch.cc:43: TensorDispatcher: "
     "dlopen failed: /usr/lib/python3/dist-packages/dgl/tensoradapter/pytorch/libtensoradapter_pytorch_2.4.0.so: "
     "cannot open shared object file: No such file or directory\n", ""},
    {"tiny-cuda-nn's bindings", "OSError: Could not find compatible tinycudann extension for compute capability "
     "89.\n", "cuda.no_kernel_image"},
    {"MSVC off PATH", "error: command 'cl.exe' failed: None\n", "jit.build_failed"},
    {"a GEMM's dtype on an older GPU", "RuntimeError: gemm input type at::BFloat16 and output type float is only "
     "supported for CUDA devices with compute capability 8.0 or higher\n", "lib.arch_unsupported"},
    {"Unsloth without a GPU", "NotImplementedError: Unsloth: No NVIDIA GPU found? Unsloth currently only supports "
     "GPUs!\n", "cuda.no_device"},
    {"a kernel package's setup.py without nvcc", "NameError: name 'bare_metal_version' is not defined\n",
     "jit.build_failed"},
    {"xformers' Triton probe on Windows", "A matching Triton is not available, some optimizations will not be "
     "enabled.\nError caught was: DLL load failed while importing libtriton: The specified module could not be "
     "found.\n", ""},
    {"an ONNX parser reading another format", "[libprotobuf ERROR google/protobuf/text_format.cc:335] Error parsing "
     "text-format onnx2trt_onnx.ModelProto: 1:1: Invalid control characters encountered in text.\n",
     "model.load_failed"},
    // s73 to s75's kinds
    {"ctypes' access violation", "OSError: exception: access violation writing 0x00000000000000A8\n", "native.crash"},
    {"PyTorch's driver check without its space", "The NVIDIA driver on your system is too old(found version 9010).\n",
     "cuda.driver_too_old"},
    {"an attention library's architecture gate", "RuntimeError: Unsupported CUDA architecture: sm70\n",
     "lib.arch_unsupported"},
    {"PyTorch's CUDA check with its arguments unformatted", "RuntimeError: ('The detected CUDA version (%s) "
     "mismatches the version that was used to compilePyTorch (%s). Please make sure to use the same CUDA "
     "versions.', '12.1', '11.8')\n", "python.version_conflict"},
    // s76 to s78's kinds: speech, face and upscaling tools, science
    {"cuFFT of an older CUDA", "RuntimeError: cuFFT error: CUFFT_INTERNAL_ERROR\n", "cuda.toolkit_too_old_for_arch"},
    {"onnxruntime's arena", "2025-03-01 10:00:00.1 [E:onnxruntime:, sequential_executor.cc:516 ExecuteKernel] "
     "Non-zero status code returned while running Conv node. Name:'/conv1/Conv' Status Message: "
     "D:\\a\\_work\\1\\s\\onnxruntime\\core\\framework\\bfc_arena.cc:376 "
     "onnxruntime::BFCArena::AllocateRawInternal Failed to allocate memory for requested buffer of size "
     "536870912\n", "cuda.oom"},
    {"onnxruntime's provider without its dependency", "Error loading \"C:\\venv\\Lib\\site-packages\\onnxruntime\\"
     "capi\\onnxruntime_providers_cuda.dll\" which depends on \"cudnn64_9.dll\" which is missing. (Error 126: \"The "
     "specified module could not be found.\")\n", "native.lib_not_found"},
    {"a GPU choice a CPU build lacks", "run.py: error: argument --execution-providers: invalid choice: 'cuda' "
     "(choose from 'cpu')\n", "cuda.no_device"},
    {"pip's resolver", "ERROR: Cannot install torch==2.1.0 and torchaudio==2.3.0 because these package versions have "
     "conflicting dependencies.\n", "python.version_conflict"},
    {"transformers without a backend", "ValueError: Backend should be defined in the BACKENDS_MAPPING. Offending "
     "backend: flax\n", "python.version_conflict"},
    {"absl's required flag", "FATAL Flags parsing error: flag --data_dir=None: Flag --data_dir must have a value "
     "other than None.\n", "config.invalid"},
    {"insightface's model file", "AssertionError: model_file /root/.insightface/models/buffalo_l/det_10g.onnx "
     "should exist\n", "model.load_failed"},
    {"ncnn without a Vulkan GPU", "no vulkan device\n", "cuda.no_device"},
    // s79 to s81's kinds
    {"transformers' lazy import", "RuntimeError: Failed to import transformers.models.qwen2.modeling_qwen2 because "
     "of the following error (look up to see its traceback): No module named 'flash_attn_2_cuda'\n",
     "python.module_missing"},
    {"conda's solver", "Solving environment: failed\n\nResolvePackageNotFound: \n  - cudatoolkit=11.8\n",
     "config.invalid"},
    {"a CDI device no spec defines", "Error: failed to create containerd task: failed to create shim task: OCI runtime "
     "create failed: could not apply required modification to OCI specification: error modifying OCI spec: failed "
     "to inject CDI devices: unresolvable CDI devices nvidia.com/gpu=all: unknown\n", "cuda.no_device"},
    {"PyTorch's cuDNN check before 1.8", "RuntimeError: cuDNN version mismatch: PyTorch was compiled against 7603 "
     "but linked against 7102\n", "python.version_conflict"},
    {"torchvision's CUDA check wrapped by a paste", "RuntimeError: Detected that PyTorch and torchvision were "
     "compiled with different\nCUDA versions. PyTorch has CUDA Version=12.1 and torchvision has CUDA\n"
     "Version=11.8. Please reinstall the torchvision that matches your PyTorch\ninstall.\n", "python.version_conflict"},
};

// The incidents the shipped rules find in `text`, read as one input named `name`.
std::vector<Incident> Analyze(const std::string& text, const std::string& name = "svc.log") {
  static const std::shared_ptr<const RuleSet> rules = testing::ShippedRules();
  return rules ? testing::AnalyzeWholeText(rules, text, name) : std::vector<Incident>{};
}

TEST(Pastes, EachFragmentIsClassifiedAsItsProgramsWordsSay) {
  auto rules = testing::ShippedRules();
  ASSERT_TRUE(rules);
  for (const Paste& p : kPastes) {
    const auto incidents = testing::AnalyzeWholeText(rules, p.text, "paste.log");
    const std::string got = incidents.empty() || incidents[0].causes.empty()
                                ? ""
                                : rules->TaxonomyIdOf(incidents[0].causes[0].cause);
    EXPECT_EQ(got, p.cause) << p.kind << ":\n" << p.text;
  }
}

// JAX probing the platforms it was built with: a TPU that is not there is no failure.
TEST(Pastes, JaxsProbeOfAnAbsentBackendIsNoIncident) {
  EXPECT_TRUE(Analyze("I1207 10:00:00.000000 140 xla_bridge.py:884] Unable to initialize backend 'tpu': INTERNAL: "
                      "Failed to open libtpu.so: libtpu.so: cannot open shared object file: No such file or "
                      "directory\n")
                  .empty());
}

TEST(Pastes, AWarningFollowedByWorkIsNoIncident) {
  const std::string text =
      "20241128 03:48:41.743000 UTC 21264 WARN Could not load engine: Could not load library "
      "\"C:\\app\\engines\\engine.dll\" - server.cc:299\n"
      "20241128 03:48:42.001000 UTC 21264 INFO Server started, listening at: 127.0.0.1:39291 - main.cc:80\n"
      "20241128 03:48:42.002000 UTC 21264 INFO Please load your model - main.cc:81\n";
  EXPECT_TRUE(Analyze(text).empty());
}

// A rank's own traceback that no rule names, then torchrun's report of the failed worker: the
// incident is titled by the rank's words, not by the launcher's ChildFailedError.
TEST(Pastes, ARanksOwnWordsTitleTheJobNotTheLaunchersReport) {
  const std::string text =
      "[rank1]: Traceback (most recent call last):\n"
      "[rank1]:   File \"/app/train.py\", line 10, in <module>\n"
      "[rank1]:     check(batch)\n"
      "[rank1]: ValueError: the batch holds 3 columns where the collator expects 4\n"
      "E0801 10:00:01.123000 140 torch/distributed/elastic/multiprocessing/api.py:833] failed (exitcode: 1) "
      "local_rank: 1 (pid: 2261) of binary: /usr/bin/python\n"
      "Traceback (most recent call last):\n"
      "  File \"/usr/bin/torchrun\", line 8, in <module>\n"
      "    sys.exit(main())\n"
      "torch.distributed.elastic.multiprocessing.errors.ChildFailedError: \n";
  const auto incidents = Analyze(text, "train.log");
  ASSERT_EQ(incidents.size(), 1u);
  ASSERT_FALSE(incidents[0].causes.empty());
  EXPECT_EQ(incidents[0].causes[0].cause, "unclassified");
  EXPECT_NE(incidents[0].causes[0].title.find("the batch holds"), std::string::npos)
      << incidents[0].causes[0].title;
}

// xformers' warning when it finds no Triton holds, in more words, PyTorch's assertion "Triton is
// not available": the line is the warning whose words it shows in full, and a log that ends
// with it has not failed.
TEST(Pastes, AWarningIsNotTheShorterErrorItsWordsContain) {
  const std::string text =
      "A matching Triton is not available, some optimizations will not be enabled.\n"
      "Error caught was: No module named 'triton'\n";
  EXPECT_TRUE(Analyze(text).empty());
  EXPECT_FALSE(Analyze("AssertionError: Triton is not available\n").empty());
}

// NVIDIA's container images warn at start-up when they see no driver; a machine whose driver
// comes up after that banner serves on its GPUs, so the warning alone is no failure.
TEST(Pastes, TheContainerImagesDriverWarningAloneIsNoIncident) {
  const std::string text =
      "WARNING: The NVIDIA Driver was not detected.  GPU functionality will not be available.\n"
      "   Use the NVIDIA Container Toolkit to start this container with GPU support; see\n"
      "   https://docs.nvidia.com/datacenter/cloud-native/ .\n";
  EXPECT_TRUE(Analyze(text).empty());
}

// A program's error message alone is a failure in a paste (above), not where a longer log shows
// it among lines of work without an error word; and a warning is not an error because its words
// are those of an error site.
TEST(Pastes, AnErrorMessageWithoutLevelCountsOnlyInAFragment) {
  const std::string message =
      "Requested float16 compute type, but the target device or backend do not support efficient float16 "
      "computation.\n";
  EXPECT_FALSE(Analyze(message).empty());
  std::string log;
  for (int i = 0; i < 12; ++i) log += "loading shard " + std::to_string(i) + " of 12\n";
  EXPECT_TRUE(Analyze(log + message).empty());
  EXPECT_TRUE(Analyze(message + log).empty());
  EXPECT_TRUE(Analyze("UserWarning: FP16 is not supported on CPU; using FP32 instead\n").empty());
  // An analyzer that reads a stretch from inside its input (a followed file after its checkpoint,
  // a part of a split input) does not take a short stretch for a paste.
  auto rules = testing::ShippedRules();
  ASSERT_TRUE(rules);
  Analyzer inside(rules, {});
  ingest::IngestOptions io;
  rules->UsePrefilter(io, inside, rules->MakeLineFinder());
  ingest::EventStream stream(0, io, [&](ingest::Event&& ev) { inside.Add(ev, "svc.log"); });
  stream.Feed(message);
  stream.Finish();
  inside.EndSource(0, stream.counters().lines);
  EXPECT_TRUE(inside.Finish().empty());
}

// A paste whose only line says in its own words that something failed, in no form a rule or an
// error-site row knows, is a failure titled by that line; not where it says the program went on,
// not where another line of the input is a known benign one, not among the lines of a longer log,
// and not where a rule found a cause (the line does not outrank it).
TEST(Pastes, AFragmentsOwnWordsOfFailureAreAnUnclassifiedFailure) {
  for (const char* text : {"open() failed: No such file or directory\n",
                           "Couldn't register GPU MR\n",
                           "unexpected key \"module.features.conv0.weight\" in state_dict\n"}) {
    const auto incidents = Analyze(text);
    ASSERT_EQ(incidents.size(), 1u) << text;
    ASSERT_FALSE(incidents[0].causes.empty()) << text;
    EXPECT_EQ(incidents[0].causes[0].cause, "unclassified") << text;
    EXPECT_NE(incidents[0].causes[0].title.find(std::string(text).substr(0, 12)), std::string::npos)
        << incidents[0].causes[0].title;
  }
  EXPECT_TRUE(Analyze("gemm_config.in is not found; using default GEMM algo\n").empty());
  EXPECT_TRUE(Analyze("Could not open the optional plugin, falling back to the built-in one\n").empty());
  EXPECT_TRUE(Analyze("2024-08-15 02:53:40.372242: E external/local_xla/xla/stream_executor/cuda/cuda_blas.cc:1452] "
                      "Unable to register cuBLAS factory: Attempting to register factory for plugin cuBLAS when one "
                      "has already been registered\n")
                  .empty());
  std::string log;
  for (int i = 0; i < 12; ++i) log += "loading shard " + std::to_string(i) + " of 12\n";
  EXPECT_TRUE(Analyze(log + "open() failed: No such file or directory\n").empty());
  // A binary file given as input (a Flight Recorder dump, pickled) is no paste, whatever words its
  // bytes spell.
  std::ifstream dump(std::string(TRIAGE_SOURCE_DIR) + "/tests/data/jobs/job_hang_fr/fr/nccl_trace_rank_0",
                     std::ios::binary);
  ASSERT_TRUE(dump);
  EXPECT_TRUE(Analyze(std::string(std::istreambuf_iterator<char>(dump), {}), "nccl_trace_rank_0").empty());
  const auto oom = Analyze("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB\n"
                           "could not finish the epoch\n");
  ASSERT_FALSE(oom.empty());
  ASSERT_FALSE(oom[0].causes.empty());
  EXPECT_EQ(oom[0].causes[0].cause, "cuda.oom");
}

// A traceback that logging printed with a warning of its own exception (exc_info) was caught: a
// batch-size finder's OOM, logged, retried smaller, then training. The same traceback after a
// warning about something else is a crash.
TEST(Pastes, ATracebackLoggedUnderAWarningOfItsOwnExceptionIsCaught) {
  const std::string oom =
      "CUDA out of memory. Tried to allocate 237.54 GiB. GPU 0 has a total capacity of 79.18 GiB of which 78.66 "
      "GiB is free.";
  const std::string traceback =
      "Traceback (most recent call last):\n"
      "  File \"/app/autobatch.py\", line 14, in <module>\n"
      "    acts = torch.empty(batch * per_sample // 4, dtype=torch.float32, device=\"cuda\")\n"
      "torch.OutOfMemoryError: " + oom + "\n";
  const std::string after =
      "2026-12-06 11:58:25,511 INFO autobatch: retrying with batch size 30404\n"
      "2026-12-06 11:58:25,654 INFO autobatch: step 0 loss 1024.9971\n"
      "2026-12-06 11:58:25,655 INFO autobatch: training finished\n";
  const std::string caught =
      "2026-12-06 11:58:25,510 WARNING autobatch: batch size 60809 does not fit: " + oom + "\n" + traceback + after;
  EXPECT_TRUE(Analyze(caught).empty());
  const std::string crash =
      "2026-12-06 11:58:25,510 WARNING autobatch: the dataset cache is stale, rebuilding it\n" + traceback;
  const auto incidents = Analyze(crash);
  ASSERT_FALSE(incidents.empty());
  ASSERT_FALSE(incidents[0].causes.empty());
  EXPECT_EQ(incidents[0].causes[0].cause.rfind("cuda.oom", 0), 0u) << incidents[0].causes[0].cause;
}

}  // namespace
}  // namespace triage::core
