# A training script meant for torchrun, run as a plain `python train.py`: its DistributedSampler
# asks torch.distributed for the world size, and no process group exists ("Default process group
# has not been initialized, please make sure to call init_process_group."). config.invalid: the
# launch, not the code, is wrong.
import torch
from torch.utils.data import DataLoader, TensorDataset
from torch.utils.data.distributed import DistributedSampler

data = TensorDataset(torch.randn(128, 8), torch.randint(0, 2, (128,)))
print("dataset of %d samples" % len(data), flush=True)
sampler = DistributedSampler(data)
loader = DataLoader(data, batch_size=16, sampler=sampler)
model = torch.nn.Linear(8, 2).cuda()
for x, y in loader:
    loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
print("epoch done", flush=True)
