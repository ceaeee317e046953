# NCCL_ALGO (set by run.sh) names an algorithm NCCL does not have.
import torch
import torch.distributed as dist

dist.init_process_group("nccl")
torch.cuda.set_device(0)
t = torch.ones(1024, device="cuda")
dist.all_reduce(t)
torch.cuda.synchronize()
print(t.sum().item())
dist.destroy_process_group()
