# The service's environment sets PYTORCH_CUDA_ALLOC_CONF with a key the caching allocator does
# not know (run.sh sets it): the first CUDA allocation refuses it. config.invalid.
import os
import torch
print("PYTORCH_CUDA_ALLOC_CONF=%s" % os.environ.get("PYTORCH_CUDA_ALLOC_CONF"), flush=True)
x = torch.zeros(1024, device="cuda")
print(float(x.sum()))
