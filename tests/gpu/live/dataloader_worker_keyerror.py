# A dataset's __getitem__ asks its rows for a key they do not have; the error is raised in a
# DataLoader worker and re-raised in the main process.
import torch
from torch.utils.data import DataLoader, Dataset


class Rows(Dataset):
    def __init__(self):
        self.rows = [{"image": torch.randn(3, 32, 32), "label": i % 10} for i in range(64)]

    def __len__(self):
        return len(self.rows)

    def __getitem__(self, i):
        row = self.rows[i]
        return row["pixel_values"], row["label"]


for images, labels in DataLoader(Rows(), batch_size=8, num_workers=2):
    print(images.cuda().shape)
