# NCCL is told to use a network interface this host does not have (NCCL_SOCKET_IFNAME).
import torch
import torch.distributed as dist
dist.init_process_group("nccl")
t = torch.ones(4, device="cuda")
dist.all_reduce(t)
torch.cuda.synchronize()
print(t)
