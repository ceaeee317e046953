# The process is given no GPU at all (run with CUDA_VISIBLE_DEVICES= set to nothing).
import torch
x = torch.zeros(4, device="cuda")
print(x)
