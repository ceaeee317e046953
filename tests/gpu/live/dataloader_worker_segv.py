# A DataLoader worker crashes in native code (a null pointer read through ctypes, as a faulty
# image decoder would) while decoding one sample: the worker dies of SIGSEGV and the main
# process raises "DataLoader worker (pid N) is killed by signal: Segmentation fault.".
# native.crash: native code crashed (in the worker).
import ctypes
import torch
from torch.utils.data import DataLoader, Dataset


class Frames(Dataset):
    def __len__(self):
        return 256

    def __getitem__(self, i):
        if i == 77:
            ctypes.string_at(0)  # the decoder's bad read
        return torch.randn(3, 64, 64), i % 10


model = torch.nn.Sequential(torch.nn.Flatten(), torch.nn.Linear(3 * 64 * 64, 10)).cuda()
for step, (x, y) in enumerate(DataLoader(Frames(), batch_size=16, num_workers=2)):
    loss = torch.nn.functional.cross_entropy(model(x.cuda()), y.cuda())
    print("step %d loss %.4f" % (step, loss.item()), flush=True)
