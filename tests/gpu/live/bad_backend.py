# torch.distributed initialised with a misspelt backend name ("ncl"): init_process_group refuses.
# config.invalid.
import os
import torch.distributed as dist
os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29533")
print("init_process_group backend=ncl", flush=True)
dist.init_process_group(backend="ncl", rank=0, world_size=1)
