# A torchrun job of two ranks (gloo, a 10 s timeout) where rank 1 leaves the loop early (its data
# shard runs out) and never joins the second all_reduce: rank 0 waits for it until gloo's
# timeout, raises, and torchrun stops rank 1. nccl.failure with rank 1 as its first actor: a
# collective failed because one rank did not take part as the other did.
import datetime, os, time
import torch
import torch.distributed as dist

dist.init_process_group("gloo", timeout=datetime.timedelta(seconds=10))
rank = dist.get_rank()
grad = torch.ones(1 << 16)
steps = 1 if rank == 1 else 4  # rank 1's shard is shorter
for step in range(steps):
    dist.all_reduce(grad)
    print("rank %d: step %d synced" % (rank, step), flush=True)
print("rank %d: epoch done, evaluating" % rank, flush=True)
time.sleep(60)
dist.destroy_process_group()
