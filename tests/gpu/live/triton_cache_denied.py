# A service that drops root for nobody before its first Triton kernel compiles, with its Triton
# cache in a folder of root's (mode 0700; run.sh makes it and passes it as TRITON_CACHE_DIR):
# the cache cannot be written. host.permission: the service's user may not write a folder it needs.
import os, sys
if os.geteuid() == 0:
    os.setgroups([])
    os.setgid(65534)
    os.setuid(65534)
import torch, triton, triton.language as tl

@triton.jit
def add_one(x_ptr, n, BLOCK: tl.constexpr):
    i = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    m = i < n
    tl.store(x_ptr + i, tl.load(x_ptr + i, mask=m) + 1, mask=m)

x = torch.zeros(1024, device="cuda")
print("compiling add_one, cache", os.environ.get("TRITON_CACHE_DIR"), flush=True)
add_one[(4,)](x, 1024, BLOCK=256)
print(float(x.sum()))
