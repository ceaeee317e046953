# A Triton kernel loads far outside its tensor (an offset nobody masked).
import torch
import triton
import triton.language as tl

@triton.jit
def copy_kernel(src, dst, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
    x = tl.load(src + offs + (1 << 40))
    tl.store(dst + offs, x, mask=offs < n)

src = torch.randn(4096, device="cuda")
dst = torch.empty_like(src)
copy_kernel[(4,)](src, dst, src.numel(), BLOCK=1024)
torch.cuda.synchronize()
print(dst.sum().item())
