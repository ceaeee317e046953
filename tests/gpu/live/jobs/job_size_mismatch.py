# Rank 1 all-reduces a tensor of another size than rank 0 does (1023 elements against 1024), with
# no collective check (TORCH_DISTRIBUTED_DEBUG unset): what NCCL does then is not defined; the
# process group's 15 s timeout ends a collective that never completes, and the Flight Recorder's
# dumps hold each rank's sizes. nccl.failure, first rank 1 (it called the collective with other
# sizes).
import os
os.environ.pop("TORCH_DISTRIBUTED_DEBUG", None)
import torch
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record
import _job


@record
def main():
    rank, device, w = _job.start(timeout_s=15)
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
