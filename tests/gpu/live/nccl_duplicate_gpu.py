# A torchrun job of two ranks whose script puts every rank on cuda:0 (a device hard-coded instead
# of LOCAL_RANK), then all-reduces through NCCL: NCCL refuses two ranks on one GPU ("Duplicate GPU
# detected", ncclInvalidUsage) and each rank raises DistBackendError. nccl.failure: the
# collective's communicator could not be set up, and what the taxonomy checks for it (the device
# count against the ranks) is what explains it; the fault is the script's device choice, not an
# argument or setting of the service (not config.invalid).
import torch
import torch.distributed as dist
torch.cuda.set_device(0)
dist.init_process_group("nccl")
x = torch.ones(1024, device="cuda")
dist.all_reduce(x)
torch.cuda.synchronize()
print(x[0].item())
