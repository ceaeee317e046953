# torch.distributed started with the env:// rendezvous but without MASTER_ADDR (a launcher that
# did not set it): init_process_group refuses. config.invalid.
import os
import torch.distributed as dist
os.environ.pop("MASTER_ADDR", None)
os.environ["MASTER_PORT"] = "29561"
os.environ["RANK"], os.environ["WORLD_SIZE"] = "0", "1"
print("init_process_group backend=nccl init_method=env://", flush=True)
dist.init_process_group(backend="nccl")
