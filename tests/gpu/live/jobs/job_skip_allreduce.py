# Rank 1 leaves the loop early (its shard ran out) and never joins the all_reduce of step 3; rank
# 0 waits in it until the process group's 15 s timeout: the NCCL watchdog aborts rank 0, and
# torchrun stops rank 1. nccl.failure, first rank 1 (it did not take part; no error of its own).
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
    if rank == 1:
        print("rank 1: shard exhausted, evaluating", flush=True)
        time.sleep(120)
        return
    for i in range(3, 6):
        _job.step(i, device, w, rank)
    _job.finish()


if __name__ == "__main__":
    main()
