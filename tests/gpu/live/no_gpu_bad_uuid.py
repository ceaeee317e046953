# CUDA_VISIBLE_DEVICES names a GPU UUID that this host does not have.
import torch
print("cuda available:", torch.cuda.is_available(), flush=True)
x = torch.zeros(4, device="cuda")
print(x)
