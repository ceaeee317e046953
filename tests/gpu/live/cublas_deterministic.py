# A training script that asks for deterministic algorithms and multiplies matrices on the GPU
# without CUBLAS_WORKSPACE_CONFIG: PyTorch refuses cuBLAS's nondeterministic workspace ("... this
# operation is not deterministic because it uses CuBLAS and you have CUDA >= 10.2. To enable
# deterministic behavior in this case, you must set an environment variable before running your
# PyTorch application: CUBLAS_WORKSPACE_CONFIG=:4096:8 ..."). config.invalid: the program's
# setting needs an environment variable that was not set.
import os
os.environ.pop("CUBLAS_WORKSPACE_CONFIG", None)
import torch
torch.use_deterministic_algorithms(True)
w = torch.randn(512, 512, device="cuda")
x = torch.randn(64, 512, device="cuda")
print("forward pass", flush=True)
print((x @ w).sum().item())
