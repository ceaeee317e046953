# Rank 1 all-reduces a tensor of another size than rank 0 does (1023 elements against 1024), with
# TORCH_DISTRIBUTED_DEBUG=DETAIL: PyTorch's collective check raises on both ranks ("Detected
# mismatch between collectives on ranks"). nccl.failure, first rank 1 (it called the collective
# with other sizes).
import os, sys, time
os.environ.setdefault("TORCH_DISTRIBUTED_DEBUG", "DETAIL")
import torch
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record
import _job


@record
def main():
    rank, device, w = _job.start()
    for i in range(3):
        _job.step(i, device, w, rank)
    t = torch.ones(1023 if rank == 1 else 1024, device=device)
    dist.all_reduce(t)
    torch.cuda.synchronize()
    for i in range(3, 6):
        _job.step(i, device, w, rank)
    _job.finish()


if __name__ == "__main__":
    main()
