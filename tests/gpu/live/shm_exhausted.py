# DataLoader workers hand batches over through /dev/shm, which holds only 1 MiB here (as a
# container's small shared memory does).
import torch
from torch.utils.data import DataLoader, Dataset

class Images(Dataset):
    def __len__(self):
        return 64
    def __getitem__(self, i):
        return torch.randn(3, 512, 512)

for batch in DataLoader(Images(), batch_size=8, num_workers=2):
    print(batch.shape, flush=True)
