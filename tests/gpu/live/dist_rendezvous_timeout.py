# Rank 0 of a 2-rank job whose other rank never starts: the TCP store waits for its client and
# gives up after the job's timeout. nccl.failure (a rendezvous timeout).
import datetime
import torch.distributed as dist
print("rank 0 of 2: waiting for rank 1 at tcp://127.0.0.1:29563", flush=True)
dist.init_process_group(backend="nccl", init_method="tcp://127.0.0.1:29563", rank=0, world_size=2,
                        timeout=datetime.timedelta(seconds=10))
