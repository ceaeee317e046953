# A CUDA extension built at run time for another GPU architecture only (sm_80 code, no PTX) and run
# on this GPU (sm_90): its kernel cannot run here ("no kernel image is available for execution on
# the device"). cuda.no_kernel_image.
import os, tempfile, torch
os.environ["TORCH_CUDA_ARCH_LIST"] = "8.0"
from torch.utils.cpp_extension import load_inline
cuda_src = r"""
#include <torch/extension.h>
#include <c10/cuda/CUDAException.h>
__global__ void twice(float* x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= 2.f; }
torch::Tensor run(torch::Tensor x) {
  twice<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), x.numel());
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return x;
}
"""
cpp_src = "torch::Tensor run(torch::Tensor x);"
ext = load_inline(name="triage_arch_ext", cpp_sources=cpp_src, cuda_sources=cuda_src, functions=["run"],
                  build_directory=tempfile.mkdtemp(prefix="ext-arch-"),
                  extra_cuda_cflags=["-gencode=arch=compute_80,code=sm_80"])
print("built for sm_80; this GPU is sm_%d%d" % torch.cuda.get_device_capability(), flush=True)
print(ext.run(torch.ones(1024, device="cuda")).sum().item())
