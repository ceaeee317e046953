# A torchrun job whose rendezvous port another process already holds.
import torch.distributed as dist
dist.init_process_group("gloo")
print("joined", dist.get_rank())
