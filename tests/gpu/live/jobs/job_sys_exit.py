# Rank 0 exits with status 3 (sys.exit) after a check of its own fails; torchrun reports the
# exit code and stops rank 1. unclassified, first rank 0.
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
        print("rank 0: shard manifest lists 4096 samples, found 4095; exiting", flush=True)
        sys.exit(3)
    for i in range(3, 6):
        _job.step(i, device, w, rank)
    _job.finish()


if __name__ == "__main__":
    main()
