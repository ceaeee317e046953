# A training script that asks for deterministic algorithms (for reproducible runs) and then
# multiplies on the GPU without the cuBLAS workspace setting that determinism needs: PyTorch
# refuses the matmul. config.invalid: the run's settings (CUBLAS_WORKSPACE_CONFIG unset) do not
# allow what it asked for.
import os
import torch
os.environ.pop("CUBLAS_WORKSPACE_CONFIG", None)
torch.manual_seed(0)
torch.use_deterministic_algorithms(True)
print("deterministic algorithms on; building model", flush=True)
w = torch.randn(512, 512, device="cuda")
x = torch.randn(64, 512, device="cuda")
y = x @ w
print(float(y.sum()))
