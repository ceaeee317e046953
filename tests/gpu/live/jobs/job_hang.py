# Rank 0 hangs before the barrier (it waits forever on a lock nobody releases); rank 1 waits at
# the barrier until the process group's 15 s timeout: the NCCL watchdog aborts rank 1, and
# torchrun stops rank 0. nccl.failure, first rank 0 (it hung; no error of its own).
import os, sys, time
import torch
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record
import _job


@record
def main():
    rank, device, w = _job.start(timeout_s=15)
    for i in range(3):
        _job.step(i, device, w, rank)
    if rank == 0:
        import threading
        print("rank 0: writing the checkpoint", flush=True)
        lock = threading.Lock()
        lock.acquire()
        lock.acquire()
    dist.barrier()
    for i in range(3, 6):
        _job.step(i, device, w, rank)
    _job.finish()


if __name__ == "__main__":
    main()
