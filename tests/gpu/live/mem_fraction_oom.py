# A worker that shares its GPU caps itself at 5% of the card
# (torch.cuda.set_per_process_memory_fraction) and then allocates a cache larger than that cap:
# torch.OutOfMemoryError although the card has memory free. cuda.oom: the device memory the
# process may use is exhausted (the remedy: a larger fraction or a smaller cache).
import torch
torch.cuda.set_per_process_memory_fraction(0.05, 0)
total = torch.cuda.get_device_properties(0).total_memory
print("worker capped at 5%% of GPU 0: %.2f GiB of %.2f GiB" % (total * 0.05 / 2**30, total / 2**30), flush=True)
cache_bytes = int(total * 0.08)
print("allocating the KV cache: %.2f GiB" % (cache_bytes / 2**30), flush=True)
cache = torch.empty(cache_bytes // 2, dtype=torch.float16, device="cuda")
print(cache.shape)
