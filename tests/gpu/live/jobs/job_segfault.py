# Rank 0 reads through a null pointer (ctypes), as a crashing native extension does: SIGSEGV;
# torchrun reports the signal and stops rank 1. native.crash, first rank 0.
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
    if rank == 0:
        import ctypes
        ctypes.string_at(0)
    for i in range(3, 6):
        _job.step(i, device, w, rank)
    _job.finish()


if __name__ == "__main__":
    main()
