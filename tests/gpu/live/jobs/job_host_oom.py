# Rank 1 joins a cgroup with a 1 GiB memory limit (JOB_CGROUP, made by run.sh) and grows its host
# memory until the kernel kills it (SIGKILL); torchrun reports the signal and stops rank 0.
# host.oom_killed, first rank 1.
import os, sys, time
import torch
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record
import _job


def grow_host_memory():
    cg = os.environ["JOB_CGROUP"]
    with open(os.path.join(cg, "cgroup.procs"), "w") as f:
        f.write(str(os.getpid()))
    # Never without the limit: the host would fill instead.
    if open("/proc/self/cgroup").read().strip().split("::")[-1] != cg[len("/sys/fs/cgroup"):]:
        raise SystemExit("not in %s" % cg)
    chunks = []
    for n in range(32):  # 8 GiB at most
        chunks.append(bytearray(256 << 20))
        for i in range(0, len(chunks[-1]), 4096):
            chunks[-1][i] = 1
        print("rank 1: cached %d MiB of samples" % ((n + 1) * 256), flush=True)
    raise SystemExit("the 1 GiB limit did not take")


@record
def main():
    rank, device, w = _job.start()
    for i in range(3):
        _job.step(i, device, w, rank)
    if rank == 1:
        grow_host_memory()
    for i in range(3, 6):
        _job.step(i, device, w, rank)
    _job.finish()


if __name__ == "__main__":
    main()
