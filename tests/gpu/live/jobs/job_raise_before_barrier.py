# Rank 0 raises a RuntimeError of the program's own right before the barrier that ends the epoch
# (a check of its loss); rank 1 waits in the barrier and fails with ncclRemoteError. unclassified
# (the program's own error), first rank 0.
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record
import _job


@record
def main():
    rank, device, w = _job.start()
    for i in range(3):
        _job.step(i, device, w, rank)
    if rank == 0:
        raise RuntimeError("loss is nan at step 3 (grad norm inf); stopping the epoch")
    dist.barrier()
    for i in range(3, 6):
        _job.step(i, device, w, rank)
    _job.finish()


if __name__ == "__main__":
    main()
