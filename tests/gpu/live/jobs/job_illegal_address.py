# Rank 1 runs a kernel of its own (CuPy) that writes through a pointer to unallocated memory: an
# illegal memory access; rank 0 waits in the next all_reduce until torchrun stops it.
# cuda.illegal_memory_access, first rank 1.
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
        import cupy
        poke = cupy.RawKernel(r"""
extern "C" __global__ void poke(int* p) { p[threadIdx.x] = 1; }
""", "poke")
        poke((1,), (32,), (cupy.uint64(0xdead0000),))
        cupy.cuda.runtime.deviceSynchronize()
    for i in range(3, 6):
        _job.step(i, device, w, rank)
    _job.finish()


if __name__ == "__main__":
    main()
