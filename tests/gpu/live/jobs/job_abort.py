# Rank 1 aborts (libc abort(), as a failed native assertion does): SIGABRT; torchrun reports the
# signal and stops rank 0. native.crash, first rank 1.
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
        print("rank 1: packing the batch", flush=True)
        import ctypes
        ctypes.CDLL(None).abort()
    for i in range(3, 6):
        _job.step(i, device, w, rank)
    _job.finish()


if __name__ == "__main__":
    main()
