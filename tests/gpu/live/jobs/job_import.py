# Rank 1 imports a module that is not installed, at step 3 (a lazy import of an optional
# dependency on a path only that rank takes): ModuleNotFoundError, recorded by @record; rank 0 goes
# on into the next all_reduce and fails with ncclRemoteError. python.module_missing, first rank 1.
import importlib
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record
import _job


@record
def main():
    rank, device, w = _job.start()
    for i in range(3):
        _job.step(i, device, w, rank)
    if rank == 1:
        print("rank 1: loading the evaluation metrics", flush=True)
        importlib.import_module("triage_job_metrics_missing")
    for i in range(3, 6):
        _job.step(i, device, w, rank)
    _job.finish()


if __name__ == "__main__":
    main()
