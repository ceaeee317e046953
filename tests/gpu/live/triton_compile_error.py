# A @triton.jit kernel with a mistake in its source (a name it never defines, `msk` for `mask`):
# the kernel's JIT compilation fails with triton.compiler.errors.CompilationError when it is first
# launched. jit.build_failed: the JIT build of the kernel failed, for an error in the code being
# compiled, as a compiler error in an extension's source does; not an architecture or toolkit gap.
import torch
import triton
import triton.language as tl


@triton.jit
def axpy(x_ptr, y_ptr, out_ptr, n, alpha, BLOCK: tl.constexpr):
    pid = tl.program_id(0)
    offs = pid * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask)
    y = tl.load(y_ptr + offs, mask=mask)
    tl.store(out_ptr + offs, alpha * x + y, mask=msk)


n = 1 << 20
x = torch.randn(n, device="cuda")
y = torch.randn(n, device="cuda")
out = torch.empty_like(x)
print("launching axpy over %d elements" % n, flush=True)
axpy[(triton.cdiv(n, 1024),)](x, y, out, n, 2.0, BLOCK=1024)
torch.cuda.synchronize()
print(float(out.sum()))
