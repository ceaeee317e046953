# A training loop whose DataLoader waits at most 2 s for a batch, with a worker that takes 30 s:
# PyTorch gives up ("DataLoader timed out after 2 seconds"). unclassified: the data pipeline is
# slower than the program allows; no GPU, library or host fault.
import time
import torch
from torch.utils.data import DataLoader, Dataset

class Slow(Dataset):
    def __len__(self):
        return 64
    def __getitem__(self, i):
        time.sleep(30)
        return torch.zeros(4)

if __name__ == "__main__":
    loader = DataLoader(Slow(), batch_size=8, num_workers=1, timeout=2)
    print("epoch 0", flush=True)
    for batch in loader:
        print(batch.cuda().sum().item())
