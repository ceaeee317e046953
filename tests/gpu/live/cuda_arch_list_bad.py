# A CUDA extension built at start-up with TORCH_CUDA_ARCH_LIST naming an architecture that does
# not exist ("13.5"): PyTorch's extension builder refuses the value before nvcc runs
# ("Unknown CUDA arch (13.5) or GPU not supported"). config.invalid: a setting the library
# parses holds a value it does not accept.
import os
os.environ["TORCH_CUDA_ARCH_LIST"] = "13.5"
import tempfile
import torch
from torch.utils.cpp_extension import load_inline
cuda_src = r"""
__global__ void twice(float* x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] *= 2; }
void run(torch::Tensor x) { twice<<<(x.numel() + 255) / 256, 256>>>(x.data_ptr<float>(), x.numel()); }
"""
print("building extension", flush=True)
ext = load_inline(name="twice_ext", cpp_sources="void run(torch::Tensor x);", cuda_sources=cuda_src,
                  functions=["run"], build_directory=tempfile.mkdtemp(), verbose=True)
x = torch.ones(16, device="cuda")
ext.run(x)
print(x.sum().item())
