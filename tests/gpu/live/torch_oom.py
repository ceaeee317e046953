# PyTorch asks for more device memory than the GPU has.
import torch
x = torch.empty(int(1.5 * torch.cuda.get_device_properties(0).total_memory), dtype=torch.uint8, device="cuda")
print(x.shape)
