# A training script that turns on deterministic algorithms, then calls an operation that has no
# deterministic CUDA implementation (torch.histc): PyTorch refuses ("... does not have a
# deterministic implementation, but you set 'torch.use_deterministic_algorithms(True)'").
# config.invalid: the program's setting and the operation it calls conflict.
import torch
torch.use_deterministic_algorithms(True)
x = torch.randn(10000, device="cuda")
print("histogram of activations", flush=True)
print(torch.histc(x, bins=10))
