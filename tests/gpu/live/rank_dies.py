# A torchrun job of two ranks where rank 1 fails; rank 0 then waits at a barrier.
import os, time
import torch
import torch.distributed as dist
dist.init_process_group("gloo")
rank = dist.get_rank()
if rank == 1:
    time.sleep(1)
    raise RuntimeError("rank 1 hit a bad batch: tensor shape mismatch (4096) vs (4095)")
dist.barrier()
