# Benign: a function compiled with torch.compile(dynamic=False) is called with a new integer each
# time, so dynamo recompiles it until it hits its recompile limit, warns, and runs it eagerly
# from then on; the program finishes.
import torch


@torch.compile(dynamic=False)
def shift_scale(x, k):
    return torch.sin(x) * k + k


x = torch.randn(1 << 16, device="cuda")
total = 0.0
for k in range(12):
    total += float(shift_scale(x, k).sum())
    print("k=%d running total %.3f" % (k, total), flush=True)
print("finished")
