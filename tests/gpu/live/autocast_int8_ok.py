# Autocast asked for int8, which CUDA autocast does not take: PyTorch warns and runs without
# autocast (or refuses, in releases that raise instead).
import torch

layer = torch.nn.Linear(8, 8).cuda()
with torch.autocast("cuda", dtype=torch.int8):
    y = layer(torch.randn(2, 8, device="cuda"))
print(y.dtype)
