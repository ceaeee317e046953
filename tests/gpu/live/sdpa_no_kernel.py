# Attention forced onto the flash backend with a head dimension it does not take (512): PyTorch
# finds no kernel to run. config.invalid: the model's settings ask for a backend that cannot run
# them.
import torch
import torch.nn.functional as F
from torch.nn.attention import SDPBackend, sdpa_kernel
q = torch.randn(1, 8, 128, 512, device="cuda", dtype=torch.float16)
print("sdpa flash, head_dim=512", flush=True)
with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
    out = F.scaled_dot_product_attention(q, q, q)
print(out.shape)
