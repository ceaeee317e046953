# Benign: a torchrun job of two ranks trains a small model with DistributedDataParallel over NCCL
# and finishes, printing NCCL's INFO lines (NCCL_DEBUG=INFO) and PyTorch's warnings on the way
# (a barrier without device_id; no destroy_process_group before exit). With one GPU both ranks
# share it, each with its own NCCL_HOSTID (NCCL connects them as two hosts, over sockets).
import os
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

rank = int(os.environ["RANK"])
world = int(os.environ["WORLD_SIZE"])
if torch.cuda.device_count() < world:
    os.environ["NCCL_HOSTID"] = "trainer-%d" % rank
device = torch.device("cuda", int(os.environ["LOCAL_RANK"]) % torch.cuda.device_count())
torch.cuda.set_device(device)
dist.init_process_group("nccl")
model = DDP(torch.nn.Sequential(torch.nn.Linear(256, 256), torch.nn.ReLU(), torch.nn.Linear(256, 8)).to(device),
            device_ids=[device.index])
opt = torch.optim.SGD(model.parameters(), lr=0.05)
torch.manual_seed(rank)
for step in range(20):
    x = torch.randn(32, 256, device=device)
    y = torch.randint(0, 8, (32,), device=device)
    loss = torch.nn.functional.cross_entropy(model(x), y)
    opt.zero_grad()
    loss.backward()
    opt.step()
    if rank == 0 and step % 5 == 0:
        print("step %d loss %.4f" % (step, loss.item()), flush=True)
dist.barrier()
if rank == 0:
    print("training finished", flush=True)
