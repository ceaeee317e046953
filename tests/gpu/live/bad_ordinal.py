# A device index past the GPUs the process has.
import torch
n = torch.cuda.device_count()
x = torch.zeros(4, device="cuda:%d" % (n + 3))
print(x)
