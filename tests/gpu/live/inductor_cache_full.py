# torch.compile writes its generated kernels under TORCHINDUCTOR_CACHE_DIR and TRITON_CACHE_DIR,
# both on a mount that is full (run.sh mounts a 1 MiB tmpfs and fills it first): the write fails
# with ENOSPC. host.disk_full, on the mount the log names.
import torch
print("compiling on", torch.cuda.get_device_name(0), flush=True)
@torch.compile
def fused(x, y):
    return torch.nn.functional.gelu(x @ y) * 0.5 + torch.sin(x)
x = torch.randn(512, 512, device="cuda")
print(fused(x, x).sum().item())
