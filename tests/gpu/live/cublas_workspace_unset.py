# Deterministic algorithms are asked for, and a matmul goes to cuBLAS without the workspace
# setting (CUBLAS_WORKSPACE_CONFIG) that makes cuBLAS deterministic.
import os
os.environ.pop("CUBLAS_WORKSPACE_CONFIG", None)
import torch

torch.use_deterministic_algorithms(True)
a = torch.randn(256, 256, device="cuda")
print((a @ a).sum().item())
