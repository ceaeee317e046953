# A Triton kernel multiplies 8x8 tiles with tl.dot, below the smallest tile its tensor-core
# lowering takes.
import torch
import triton
import triton.language as tl


@triton.jit
def matmul8(a, b, c):
    offs = tl.arange(0, 8)
    idx = offs[:, None] * 8 + offs[None, :]
    tl.store(c + idx, tl.dot(tl.load(a + idx), tl.load(b + idx)))


a = torch.randn(8, 8, device="cuda")
b = torch.randn(8, 8, device="cuda")
c = torch.empty(8, 8, device="cuda")
matmul8[(1,)](a, b, c)
print(c.sum().item())
