# A training script asks for deterministic algorithms without setting CUBLAS_WORKSPACE_CONFIG:
# PyTorch refuses the first cuBLAS matmul. config.invalid: the run's own settings contradict
# each other (the fix is the environment variable, or warn_only=True).
import os
import torch
os.environ.pop("CUBLAS_WORKSPACE_CONFIG", None)
torch.use_deterministic_algorithms(True)
x = torch.randn(256, 256, device="cuda")
print("step 0: forward", flush=True)
y = x @ x
print(float(y.sum()))
