# An all_reduce on a CPU tensor in a process group of the NCCL backend alone: NCCL has no CPU
# path and the call is refused. config.invalid.
import os
import torch, torch.distributed as dist
os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29565")
dist.init_process_group(backend="nccl", rank=0, world_size=1)
torch.cuda.set_device(0)
t = torch.ones(4)  # left on the CPU
print("all_reduce of a", t.device, "tensor", flush=True)
dist.all_reduce(t)
print(t)
