# Rank 1 raises an exception of the program's own (a sample without the key the collate step
# needs); rank 0 waits in the next all_reduce until torchrun stops it. unclassified, first rank 1.
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
        sample = {"pixel_values": torch.zeros(3, 224, 224)}
        batch = [sample["input_ids"]]
    for i in range(3, 6):
        _job.step(i, device, w, rank)
    _job.finish()


if __name__ == "__main__":
    main()
