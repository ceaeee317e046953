# A job that succeeds: six steps on both ranks, with NCCL_DEBUG=INFO (NCCL's start-up lines, its
# socket transport, the communicator's teardown) and a barrier before the end. No failure.
import os
os.environ.setdefault("NCCL_DEBUG", "INFO")
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record
import _job


@record
def main():
    rank, device, w = _job.start()
    for i in range(6):
        _job.step(i, device, w, rank)
    _job.finish()
    print("rank %d: done" % rank, flush=True)


if __name__ == "__main__":
    main()
