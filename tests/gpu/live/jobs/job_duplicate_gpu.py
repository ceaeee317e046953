# Both ranks put themselves on cuda:0 (a device hard-coded instead of LOCAL_RANK) and, unlike the
# other jobs of this folder, with no NCCL_HOSTID of their own: NCCL sees two ranks of one host on
# one GPU and refuses the communicator ("Duplicate GPU detected", ncclInvalidUsage) on both ranks
# at the first collective. nccl.failure; both ranks fail alike at once.
import datetime
import os
import torch
import torch.distributed as dist
from torch.distributed.elastic.multiprocessing.errors import record


@record
def main():
    rank = int(os.environ["RANK"])
    os.environ.pop("NCCL_HOSTID", None)
    torch.cuda.set_device(0)
    dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=30))
    print("rank %d on cuda:0" % rank, flush=True)
    x = torch.ones(1024, device="cuda")
    dist.all_reduce(x)
    torch.cuda.synchronize()
    print("sum", x[0].item(), flush=True)
    dist.destroy_process_group()


if __name__ == "__main__":
    main()
