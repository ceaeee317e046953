# An index out of range inside a CUDA kernel: the device-side assert fires.
import torch
t = torch.arange(10, device="cuda")
idx = torch.tensor([3, 12], device="cuda")
print(t[idx].sum().item())
