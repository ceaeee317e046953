# FSDP asked to shard a model whose weights include integers (as 8-bit quantized storage does):
# its flat parameter takes floating point only ("ValueError: Cannot flatten integer dtype tensors").
# config.invalid: quantized weights need FSDP's own support (a quant storage dtype) or no FSDP.
import os
os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29753")
import warnings
import torch
import torch.distributed as dist
from torch.distributed.fsdp import FullyShardedDataParallel as FSDP


class QuantLinear(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.weight = torch.nn.Parameter(torch.randint(-127, 127, (64, 64), dtype=torch.int8), requires_grad=False)
        self.scale = torch.nn.Parameter(torch.ones(64), requires_grad=False)

    def forward(self, x):
        return x @ (self.weight.float() * self.scale[:, None]).t()


warnings.simplefilter("ignore", FutureWarning)
dist.init_process_group("nccl", rank=0, world_size=1)
torch.cuda.set_device(0)
model = torch.nn.Sequential(QuantLinear(), torch.nn.Linear(64, 4)).cuda()
print("model loaded with int8 weights", flush=True)
model = FSDP(model)
print("wrapped", flush=True)
