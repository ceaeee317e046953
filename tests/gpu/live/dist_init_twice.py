# A script that initialises the default process group, then calls a helper that initialises it
# again: torch.distributed refuses ("trying to initialize the default process group twice!").
# unclassified: a mistake in the program's own code, reported in the program's words.
import os
os.environ.setdefault("MASTER_ADDR", "127.0.0.1")
os.environ.setdefault("MASTER_PORT", "29741")
import torch.distributed as dist

def setup():
    dist.init_process_group("gloo", rank=0, world_size=1)

dist.init_process_group("gloo", rank=0, world_size=1)
print("process group ready", flush=True)
setup()
