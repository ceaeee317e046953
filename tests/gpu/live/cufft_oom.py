# A 1-D FFT of a signal so long that its input fits in GPU memory but the transform's output and
# cuFFT's work area do not: the allocation of the plan or of the output fails (cuFFT's
# CUFFT_ALLOC_FAILED, or the caching allocator's "CUDA out of memory"). cuda.oom.
import torch
free, total = torch.cuda.mem_get_info()
n = int(free * 0.45) // 8  # complex64 elements: the input takes 45% of what is free
x = torch.ones(n, dtype=torch.complex64, device="cuda")
print(f"signal of {n} samples, {x.numel() * 8 / 2**30:.1f} GiB, free {free / 2**30:.1f} GiB", flush=True)
y = torch.fft.fft(x)
print("spectrum", y.shape)
