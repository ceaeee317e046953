# A job whose launcher template left WORLD_SIZE as a word ("two"): torch.distributed's env://
# rendezvous cannot read it. config.invalid: an environment variable the library parses holds a
# value it does not accept.
import os
import torch.distributed as dist
os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT="29571", RANK="0", WORLD_SIZE="two")
print("init_process_group backend=nccl init_method=env://", flush=True)
dist.init_process_group(backend="nccl")
print("initialised")
