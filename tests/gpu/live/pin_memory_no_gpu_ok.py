# A DataLoader asked to pin memory on a host where no GPU is visible to the process: PyTorch warns
# that pinned memory will not be used and the epoch completes on the CPU. Benign: expected none
# (run with CUDA_VISIBLE_DEVICES empty).
import torch
from torch.utils.data import DataLoader, TensorDataset
data = TensorDataset(torch.randn(256, 16), torch.randint(0, 2, (256,)))
loader = DataLoader(data, batch_size=32, pin_memory=True)
total = 0
for x, y in loader:
    total += x.shape[0]
print("epoch done,", total, "samples")
