# What every job of this folder shares: two ranks (torchrun) on NCCL; a small data-parallel step
# (a matrix product, its gradient all-reduced, the loss read back); each job makes one rank fail
# in its own way at step 3. Where the host has fewer GPUs than ranks, the ranks share one GPU,
# each with its own NCCL_HOSTID, so that NCCL connects them as two hosts do (over sockets).
import datetime
import os
import torch
import torch.distributed as dist


def start(timeout_s=60):
    rank = int(os.environ["RANK"])
    world = int(os.environ["WORLD_SIZE"])
    ngpu = torch.cuda.device_count()
    if ngpu < world:
        os.environ["NCCL_HOSTID"] = "node-%d" % rank
    device = torch.device("cuda", int(os.environ["LOCAL_RANK"]) % ngpu)
    torch.cuda.set_device(device)
    dist.init_process_group("nccl", timeout=datetime.timedelta(seconds=timeout_s), device_id=device)
    torch.manual_seed(rank)
    w = torch.randn(1024, 1024, device=device, requires_grad=True)
    print("rank %d of %d on %s" % (rank, world, device), flush=True)
    return rank, device, w


def step(i, device, w, rank):
    x = torch.randn(256, 1024, device=device)
    loss = (x @ w).tanh().square().mean()
    loss.backward()
    dist.all_reduce(w.grad)
    with torch.no_grad():
        w -= 0.01 * w.grad / dist.get_world_size()
        w.grad.zero_()
    value = loss.item()
    if rank == 0:
        print("step %d loss %.5f" % (i, value), flush=True)


def finish():
    dist.barrier()
    dist.destroy_process_group()
