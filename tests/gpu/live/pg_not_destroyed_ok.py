# A one-rank job over NCCL that does its all_reduce and exits without destroy_process_group():
# PyTorch warns at exit that the process group was not destroyed. Nothing failed: expected none.
import os, torch, torch.distributed as dist
os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29571")
dist.init_process_group("nccl", rank=0, world_size=1)
x = torch.ones(4, device="cuda")
dist.all_reduce(x)
print("all_reduce", x.tolist(), flush=True)
print("done")
