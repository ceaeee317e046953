# Benign: the same model with an unused head, wrapped with find_unused_parameters=True, trains to
# its end (PyTorch may warn that the search costs time; the job goes on).
import os
os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29752")
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from _two_heads import TwoHeads

dist.init_process_group("nccl", rank=0, world_size=1)
device = torch.device("cuda", 0)
torch.cuda.set_device(device)
model = DDP(TwoHeads().to(device), device_ids=[0], find_unused_parameters=True)
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(5):
    x = torch.randn(16, 64, device=device)
    loss = model(x).square().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
print("training finished, loss %.4f" % loss.item(), flush=True)
dist.destroy_process_group()
