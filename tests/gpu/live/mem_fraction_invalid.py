# A per-process memory fraction above 1 from the service's settings: PyTorch refuses the value.
# config.invalid.
import torch
fraction = 1.5
print("setting per-process memory fraction", fraction, flush=True)
torch.cuda.set_per_process_memory_fraction(fraction, 0)
x = torch.empty(1 << 20, device="cuda")
