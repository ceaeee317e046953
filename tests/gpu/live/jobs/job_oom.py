# Rank 1 asks for 1.2 times its GPU's memory: torch.OutOfMemoryError; rank 0 waits in the next
# all_reduce until torchrun stops it. cuda.oom, first rank 1.
import os, sys, time
import torch
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record
import _job


@record
def main():
    rank, device, w = _job.start()
    for i in range(3):
        _job.step(i, device, w, rank)
    if rank == 1:
        total = torch.cuda.get_device_properties(device).total_memory
        print("rank 1: allocating the activation buffer (%.1f GiB)" % (1.2 * total / 2**30), flush=True)
        buf = torch.empty(int(1.2 * total), dtype=torch.uint8, device=device)
    for i in range(3, 6):
        _job.step(i, device, w, rank)
    _job.finish()


if __name__ == "__main__":
    main()
