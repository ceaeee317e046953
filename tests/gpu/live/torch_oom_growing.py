# A loop that keeps every step's tensors (a list never cleared) until the GPU is full, with the
# caching allocator's expandable segments on (PYTORCH_CUDA_ALLOC_CONF): torch.OutOfMemoryError
# once the card has filled, most of it allocated by PyTorch in this process. cuda.oom. The last
# request (8 GiB) fits an empty card, so no check can confirm it once the process has exited
# (cuda.memory says not_reproduced): the suite names no verifier for it.
import os
os.environ.setdefault("PYTORCH_CUDA_ALLOC_CONF", "expandable_segments:True")
import torch
kept = []
for step in range(1000):
    kept.append(torch.empty(8 << 30, dtype=torch.uint8, device="cuda"))
    print("step %d: %.1f GiB allocated" % (step, torch.cuda.memory_allocated() / 2**30), flush=True)
