# DistributedDataParallel over a model with a branch that takes no part in the loss, wrapped
# without find_unused_parameters: at the second iteration the reducer finds the first one never
# reduced that branch's gradients ("Expected to have finished reduction in the prior iteration
# before starting a new one"). config.invalid: the wrapper's option is what fixes it.
import os
os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29751")
import torch
import torch.distributed as dist
from torch.nn.parallel import DistributedDataParallel as DDP

from _two_heads import TwoHeads

dist.init_process_group("nccl", rank=0, world_size=1)
device = torch.device("cuda", 0)
torch.cuda.set_device(device)
model = DDP(TwoHeads().to(device), device_ids=[0])
opt = torch.optim.SGD(model.parameters(), lr=0.1)
for step in range(3):
    x = torch.randn(16, 64, device=device)
    loss = model(x).square().mean()
    opt.zero_grad()
    loss.backward()
    opt.step()
    print("step %d loss %.4f" % (step, loss.item()), flush=True)
