# A torchrun job of one rank that asks for more device memory than the GPU has.
import torch
import torch.distributed as dist
dist.init_process_group("gloo")
free, total = torch.cuda.mem_get_info()
x = torch.empty(int(total * 1.2) // 4, dtype=torch.float32, device="cuda")
print(x.numel())
