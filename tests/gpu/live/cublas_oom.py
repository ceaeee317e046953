# The program fills the GPU with tensors it keeps (halving its request at each PyTorch
# OutOfMemoryError, which it catches, down to 1 MiB) before its first matrix product, whose cuBLAS
# handle then cannot be made: "CUBLAS_STATUS_ALLOC_FAILED when calling `cublasCreate(handle)`".
# cuda.oom: device memory exhausted, reported by cuBLAS rather than by PyTorch's allocator. The
# failing request names no size, so no check can confirm it: the suite names no verifier.
import torch
a = torch.randn(256, 256, device="cuda")
held, size = [], 1 << 36
while size >= 1 << 20:
    try:
        held.append(torch.empty(size, dtype=torch.uint8, device="cuda"))
    except torch.OutOfMemoryError:
        size //= 2
print("holding %.1f GiB" % (sum(t.numel() for t in held) / 2**30), flush=True)
print(float((a @ a).sum()))
