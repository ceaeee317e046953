# A service started with CUDA_VISIBLE_DEVICES set to something that names no device ("gpu0", as a
# template left unfilled can leave it; run.sh sets it): the runtime sees no GPU, and the first
# tensor on CUDA fails. cuda.no_device.
import torch
print("cuda available:", torch.cuda.is_available(), flush=True)
x = torch.ones(4, device="cuda")
print(x.sum().item())
