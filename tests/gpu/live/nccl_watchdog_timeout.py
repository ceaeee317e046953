# A torchrun job of two ranks on NCCL (each rank its own NCCL host id, so that two ranks may share
# one GPU as two hosts would) with a 15 s timeout, where rank 1 stops after the first step (its
# shard ran out) and never joins the second all_reduce: rank 0's ProcessGroupNCCL watchdog gives
# up on the collective ("Watchdog caught collective operation timeout: WorkNCCL(SeqNum=2,
# OpType=ALLREDUCE ...") and aborts the process. nccl.failure: a collective timed out because one
# rank did not take part.
import datetime, os, time
rank = int(os.environ["RANK"])
os.environ["NCCL_HOSTID"] = "triage-live-host-%d" % rank
import torch
import torch.distributed as dist

torch.cuda.set_device(0)
dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=15), device_id=torch.device("cuda", 0))
grad = torch.ones(1 << 16, device="cuda")
steps = 1 if rank == 1 else 4
for step in range(steps):
    dist.all_reduce(grad)
    torch.cuda.synchronize()
    print("rank %d: step %d synced" % (rank, step), flush=True)
print("rank %d: shard done, evaluating" % rank, flush=True)
time.sleep(90)
dist.destroy_process_group()
