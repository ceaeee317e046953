# A Triton matrix-multiply kernel launched with tiles and pipeline stages (BLOCK 128x128x128,
# num_stages=8) that need more shared memory per block than the GPU has (about 512 KiB against
# the H200's 227 KiB): triton.runtime.errors.OutOfResources "out of resource: shared memory".
# config.invalid: the kernel's launch configuration is invalid for this GPU; the remedy is to
# change it (smaller blocks or fewer stages, as Triton's message says), not the GPU, the toolkit
# or the library. Not cuda.oom (device memory is not exhausted) and not lib.arch_unsupported
# (no library refuses the GPU: the program chose the configuration).
import torch
import triton
import triton.language as tl


@triton.jit
def matmul(a, b, c, M, N, K, BM: tl.constexpr, BN: tl.constexpr, BK: tl.constexpr):
    rm = tl.program_id(0) * BM + tl.arange(0, BM)
    rn = tl.program_id(1) * BN + tl.arange(0, BN)
    rk = tl.arange(0, BK)
    acc = tl.zeros((BM, BN), dtype=tl.float32)
    for k in range(0, K, BK):
        x = tl.load(a + rm[:, None] * K + (k + rk)[None, :])
        y = tl.load(b + (k + rk)[:, None] * N + rn[None, :])
        acc += tl.dot(x, y)
    tl.store(c + rm[:, None] * N + rn[None, :], acc.to(tl.float16))


M = N = K = 2048
a = torch.randn(M, K, device="cuda", dtype=torch.float16)
b = torch.randn(K, N, device="cuda", dtype=torch.float16)
c = torch.empty(M, N, device="cuda", dtype=torch.float16)
matmul[(M // 128, N // 128)](a, b, c, M, N, K, BM=128, BN=128, BK=128, num_warps=4, num_stages=8)
torch.cuda.synchronize()
print(float(c.float().abs().mean()))
